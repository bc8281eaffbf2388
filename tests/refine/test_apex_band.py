"""The refiner's apex read next to the orifice and the band's lines fitted through it
(spraycv.refine.edges.side_lines and pinned_line; docs/experiments.md, row 66)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from analytic_plumes import SPECS

from spraycv.geometry.analytic import WedgeSpec, draw_wedge, true_length
from spraycv.refine.edges import (
    APEX_BAND,
    APEX_REACH_FRAC,
    crop_edges,
    near_apex,
    pinned_line,
    side_lines,
)
from spraycv.refine.pose import crop_pose, crop_row, pose_transform, to_image, warp_crop

SIZE = (128, 128)

APEX = np.array([10.0, 10.0])
DIRECTION = np.array([math.cos(math.radians(60)), math.sin(math.radians(60))])


def _side(n: int = 20, outliers: int = 0) -> np.ndarray:
    """(n, 2) points along DIRECTION from APEX at 10-40 px, the first `outliers` 6 px off."""
    points = APEX + np.linspace(10, 40, n)[:, None] * DIRECTION
    points[:outliers] += 6.0 * np.array([-DIRECTION[1], DIRECTION[0]])
    return points


def _angle_deg(u: np.ndarray, v: np.ndarray) -> float:
    return math.degrees(math.acos(min(1.0, abs(float(u @ v)))))


@pytest.mark.parametrize(("n", "outliers", "max_err_deg"), [(20, 0, 1e-4), (20, 2, 0.5)])
def test_the_pinned_line_passes_the_apex_along_the_side(n, outliers, max_err_deg):
    fit = pinned_line(_side(n, outliers), APEX)
    assert np.allclose(fit.point, APEX)
    assert _angle_deg(fit.direction, DIRECTION) <= max_err_deg
    assert float(fit.direction @ DIRECTION) > 0  # directed away from the apex


def test_too_few_points_give_no_pinned_line():
    assert pinned_line(_side(n=3), APEX) is None


def _crop(spec: WedgeSpec, apex_shift: tuple[float, float] = (0.0, 0.0), start_frac: float = 0.0):
    """(crop probability, transform, true length) of an analytic plume, the crop posed with
    its apex moved by `apex_shift` px and the plume drawn only from `start_frac` of L on."""
    mask = draw_wedge((512, 512), spec).astype(np.float32)
    length = true_length((512, 512), spec)
    if start_frac > 0:
        ys, xs = np.mgrid[0:512, 0:512]
        along = (xs - spec.apex[0]) * spec.axis[0] + (ys - spec.apex[1]) * spec.axis[1]
        mask[along < start_frac * length] = 0.0  # a nozzle body hiding the orifice
    apex = np.add(spec.apex, apex_shift)
    pose = crop_pose(apex, spec.axis, length, max(spec.half_left_deg, spec.half_right_deg))
    transform = pose_transform(pose, SIZE)
    return warp_crop(mask, transform, SIZE), transform, length


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("shift", [(0.0, 0.0), (3.0, -2.0)])
def test_both_lines_pass_the_true_apex_at_the_true_angle(spec: WedgeSpec, shift) -> None:
    prob, transform, _ = _crop(spec, shift)
    left, right = side_lines(prob, transform)
    assert np.allclose(left.point, right.point)  # pinned at one apex
    assert np.hypot(*(left.point - np.asarray(spec.apex))) < 1.0  # a binary mask's raster
    assert math.degrees(math.acos(float(left.direction @ right.direction))) == pytest.approx(
        spec.included_deg, abs=0.3
    )


def _same_lines(a, b) -> bool:
    return all(np.allclose(x.point, y.point) and np.allclose(x.direction, y.direction)
               for x, y in zip(a, b, strict=True))  # fmt: skip


@pytest.mark.parametrize(
    ("case", "shift_frac", "start_frac"),
    [
        ("orifice hidden: too few edges next to it", 0.0, 0.23),
        ("sides meet further from the crop's apex than the reach", APEX_REACH_FRAC + 0.05, 0.0),
    ],
)
def test_without_a_near_apex_each_side_is_fitted_freely(case, shift_frac, start_frac) -> None:
    spec = SPECS[0]
    length = true_length((512, 512), spec)
    shift = tuple(-shift_frac * length * np.asarray(spec.axis))  # the crop's apex upstream
    prob, transform, _ = _crop(spec, shift, start_frac)
    free = side_lines(prob, transform, apex_band=None)
    assert free[0] is not None and free[1] is not None, case
    assert _same_lines(side_lines(prob, transform), free), case


def test_a_crop_without_spray_has_no_near_apex_and_no_lines() -> None:
    transform = pose_transform(crop_pose((100, 50), (0, 1), 200, 20), SIZE)
    assert near_apex(np.zeros(SIZE), transform) is None
    assert side_lines(np.zeros(SIZE), transform) == (None, None)


def _jagged_wedge(half_deg: float, noise_px: float, seed: int) -> np.ndarray:
    """(H, W) crop probability of a symmetric wedge from the crop's apex whose two edges are
    each moved across by Gaussian noise of `noise_px` crop px per row (a mask's jagged edge)."""
    h, w = SIZE
    rng = np.random.default_rng(seed)
    rows = np.arange(h, dtype=np.float64)
    apex_row = crop_row(0.0, SIZE)
    half_width = np.maximum(rows - apex_row, 0.0) * math.tan(math.radians(half_deg))
    centre = (w - 1) / 2
    left = centre - half_width + rng.normal(0, noise_px, h)
    right = centre + half_width + rng.normal(0, noise_px, h)
    cols = np.arange(w, dtype=np.float64)[None, :]
    inside = np.clip(cols - left[:, None] + 0.5, 0, 1) * np.clip(right[:, None] - cols + 0.5, 0, 1)
    inside[rows <= apex_row] = 0.0
    return inside


def test_the_near_apex_steadies_the_angle_of_jagged_edges() -> None:
    """Row 64's finding on analytic edges: over many jagged wedges, lines through the apex
    where the near-orifice sides meet read the angle closer than free lines do."""
    # a square pixel map: 2 px across per crop column and per crop row
    transform = np.array([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    truth = 2 * 20.0
    errors = {"near": [], "free": []}
    for seed in range(40):
        prob = _jagged_wedge(20.0, 0.8, seed)
        for name, apex_band in (("near", APEX_BAND), ("free", None)):
            lines = side_lines(prob, transform, apex_band=apex_band)
            read = math.degrees(math.acos(float(lines[0].direction @ lines[1].direction)))
            errors[name].append(abs(read - truth))
    assert np.mean(errors["near"]) < 0.8 * np.mean(errors["free"])
    apex = to_image(np.array([[(SIZE[1] - 1) / 2, crop_row(0.0, SIZE)]]), transform)[0]
    assert np.hypot(*(near_apex(_jagged_wedge(20.0, 0.0, 0), transform) - apex)) < 0.5


def test_near_band_edges_are_read_where_the_band_says() -> None:
    prob, transform, length = _crop(SPECS[0])
    edges = crop_edges(prob, transform, (0.0, 0.25))
    along = (edges.left - np.asarray(SPECS[0].apex)) @ np.asarray(SPECS[0].axis)
    assert along.min() >= -1.0 and along.max() <= 0.25 * length + 1.0
