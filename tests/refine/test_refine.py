"""The refinement stage on analytic plumes: canonical pose, edge reading, refined angles."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from analytic_plumes import SPECS

from spraycv.geometry import ConeMeasurement, QualityFlag, measure_cones
from spraycv.geometry.analytic import WedgeSpec, draw_wedge, true_length
from spraycv.refine.edges import _row_edges, _Runs, crop_edges, side_line
from spraycv.refine.pose import crop_pose, crop_row, pose_transform, to_crop, to_image, warp_crop
from spraycv.refine.stage import Refiner, pose_of
from spraycv.runtime.processing import ModelIO

SIZE = (128, 128)


ROW_CASES = [  # profile, centre, reach, expected (left, right) edge columns
    ([0, 0, 1, 1, 0, 0], 2, 2, (1.5, 3.5)),
    ([0, 1, 0, 0, 1, 0], 2, 2, (0.5, 1.5)),  # a tie between two runs: the left one
    ([0, 1, 0, 0, 1, 0], 3, 2, (3.5, 4.5)),  # the nearer run
    ([1, 1, 1, 0, 0, 0], 1, 2, (math.nan, 2.5)),  # the run meets the border: no left edge
    ([0, 0, 0, 0, 0, 1], 1, 2, (math.nan, math.nan)),  # the only run is out of reach
    ([0, 0, 0, 0, 0, 0], 3, 2, (math.nan, math.nan)),  # nothing above 0.5
]


@pytest.mark.parametrize(("profile", "centre", "reach", "expected"), ROW_CASES)
def test_row_edges_take_the_run_nearest_the_seed(profile, centre, reach, expected):
    row = np.asarray(profile, dtype=np.float64)
    runs = _Runs.of(row[None] > 0.5)
    left, right = _row_edges(row[None], runs, np.array([centre]), reach)
    assert (left[0], right[0]) == pytest.approx(expected, nan_ok=True)


def tracked_row_by_row(band: np.ndarray, reach: int) -> tuple[list, list]:
    """The edges of each row of a (R, W) band, seeded one row at a time at the midpoint of
    the row above with both edges (the definition crop_edges computes all rows at once)."""
    runs, seed, left, right = _Runs.of(band > 0.5), (band.shape[1] - 1) / 2, [], []
    for k in range(len(band)):
        lo, hi = _row_edges(band[k : k + 1], _Runs(*(a[k : k + 1] for a in vars(runs).values())),
                            np.array([round(seed)]), reach)  # fmt: skip
        left.append(lo[0]), right.append(hi[0])
        if np.isfinite(lo[0]) and np.isfinite(hi[0]):
            seed = (lo[0] + hi[0]) / 2
    return left, right


def drifting_bands(seed: int) -> np.ndarray:
    """(40, 64) soft bands: a plume whose centre wanders, a neighbour entering from a side,
    gaps where the plume fades."""
    rng = np.random.default_rng(seed)
    cols = np.arange(64)
    centre = 31.5 + np.cumsum(rng.normal(0, 1.5, 40))
    half = np.linspace(3, 14, 40) + rng.normal(0, 1, 40)
    band = 1 / (1 + np.exp(-(half[:, None] - np.abs(cols - centre[:, None]))))
    band[:, -rng.integers(4, 20) :] += np.linspace(0, 1, 40)[:, None] > rng.random()
    band[rng.random(40) < 0.15] *= 0.3
    return np.clip(band, 0, 1)


@pytest.mark.parametrize("seed", range(12))
def test_crop_edges_track_the_plume_as_row_by_row_seeding_would(seed: int) -> None:
    band = drifting_bands(seed)
    left, right = tracked_row_by_row(band, reach=band.shape[1] // 4)
    prob, first = np.zeros((64, 64)), 10
    prob[first : first + 40] = band
    per_row = crop_row(1.0, prob.shape) - crop_row(0.0, prob.shape)  # rows per spray length
    fraction = [(row - crop_row(0.0, prob.shape)) / per_row for row in (9.5, 49.5)]
    identity = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    edges = crop_edges(prob, identity, tuple(fraction))
    rows = first + np.arange(40.0)
    expected_left = [(c, r) for c, r in zip(left, rows, strict=True) if np.isfinite(c)]
    expected_right = [(c, r) for c, r in zip(right, rows, strict=True) if np.isfinite(c)]
    np.testing.assert_array_equal(edges.left, np.array(expected_left).reshape(-1, 2))
    np.testing.assert_array_equal(edges.right, np.array(expected_right).reshape(-1, 2))


def included(left, right) -> float:
    return math.degrees(math.acos(float(np.clip(left.direction @ right.direction, -1, 1))))


@pytest.mark.parametrize("spec", SPECS)
def test_canonical_pose_round_trip_is_within_half_a_pixel(spec: WedgeSpec) -> None:
    length = true_length((512, 512), spec)
    pose = crop_pose(spec.apex, spec.axis, length, max(spec.half_left_deg, spec.half_right_deg))
    transform = pose_transform(pose, SIZE)
    # the apex sits at the top centre, the axis runs straight down the middle column
    apex_crop = to_crop(np.array([spec.apex]), transform)[0]
    assert apex_crop == pytest.approx(((SIZE[1] - 1) / 2, crop_row(0.0, SIZE)), abs=1e-9)
    down = to_crop(np.array([np.add(spec.apex, np.multiply(spec.axis, 0.3 * length))]), transform)
    assert down[0][0] == pytest.approx((SIZE[1] - 1) / 2, abs=1e-9)
    # a bright dot drawn in the image is found where the transform puts it
    image = np.zeros((512, 512), np.float32)
    dot = np.round(np.add(spec.apex, np.multiply(spec.axis, 0.2 * length))).astype(int)
    image[dot[1] - 2 : dot[1] + 3, dot[0] - 2 : dot[0] + 3] = 1.0
    crop = warp_crop(image, transform, SIZE)
    rows, cols = np.mgrid[0 : SIZE[0], 0 : SIZE[1]]
    found = to_image(np.array([[(crop * cols).sum(), (crop * rows).sum()]]) / crop.sum(), transform)
    assert np.hypot(*(found[0] - dot)) < 0.5


@pytest.mark.parametrize("spec", SPECS)
def test_edges_read_on_the_true_crop_give_the_true_angle_and_apex(spec: WedgeSpec) -> None:
    mask = draw_wedge((512, 512), spec).astype(np.float32)
    length = true_length((512, 512), spec)
    pose = crop_pose(spec.apex, spec.axis, length, max(spec.half_left_deg, spec.half_right_deg))
    transform = pose_transform(pose, SIZE)
    edges = crop_edges(warp_crop(mask, transform, SIZE), transform)
    apex = np.asarray(spec.apex)
    left, right = side_line(edges.left, apex), side_line(edges.right, apex)
    assert left is not None and right is not None
    assert included(left, right) == pytest.approx(spec.included_deg, abs=0.3)
    from spraycv.geometry.linefit import intersect

    found = intersect(left.point, left.direction, right.point, right.direction)
    assert np.hypot(*(found - apex)) < 1.5


@pytest.mark.parametrize("band", [(0.3, 0.3001), (0.6, 0.7), (-0.5, -0.3)])
def test_a_band_with_no_row_in_the_crop_gives_no_edge_points(band) -> None:
    prob = np.ones(SIZE)
    edges = crop_edges(prob, np.array([[1.0, 0, 0], [0, 1.0, 0]]), band)
    assert edges.left.shape == edges.right.shape == (0, 2)


def test_a_crop_without_spray_gives_no_lines() -> None:
    transform = pose_transform(crop_pose((100, 50), (0, 1), 200, 20), SIZE)
    edges = crop_edges(np.zeros(SIZE), transform)
    assert side_line(edges.left, np.array([100, 50])) is None
    assert side_line(edges.right, np.array([100, 50])) is None


@pytest.mark.parametrize(
    ("axis", "length"), [((0.0, 0.0), 100.0), ((0.0, 1.0), 0.0), ((0.0, 1.0), math.nan)]
)
def test_a_degenerate_pose_is_refused_with_its_values(axis, length) -> None:
    with pytest.raises(ValueError, match="finite axis and length"):
        crop_pose((10, 10), axis, length, 20)


class BrightIsSpray:
    """A crop segmenter that calls bright pixels spray: the refiner on a clean mask image."""

    io = ModelIO(SIZE, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))

    def infer(self, batch: np.ndarray) -> np.ndarray:
        return (batch[:, :1] - 0.5) * 40.0  # sharp logits around the 0.5 level


@pytest.mark.parametrize("spec", SPECS)
def test_the_refiner_reads_a_coarse_measurement_again(spec: WedgeSpec) -> None:
    mask = draw_wedge((512, 512), spec)
    (coarse,) = measure_cones(mask)
    image = np.repeat(mask[..., None] * 255, 3, axis=2).astype(np.uint8)
    (fine,) = Refiner(BrightIsSpray()).refine(image, [coarse])
    assert fine.included_angle_deg == pytest.approx(spec.included_deg, abs=0.5)
    assert np.hypot(*np.subtract(fine.apex, spec.apex)) < 2.0
    assert fine.flags == coarse.flags


def off_pose(m: ConeMeasurement) -> ConeMeasurement:
    """A coarse reading gone wrong: apex 10 px off, axis 6 deg off, length 20 % short."""
    t, (ux, uy) = math.radians(6.0), m.axis
    return dataclasses.replace(
        m,
        apex=(m.apex[0] + 8.0, m.apex[1] + 6.0),
        axis=(ux * math.cos(t) - uy * math.sin(t), ux * math.sin(t) + uy * math.cos(t)),
        length_px=0.8 * m.length_px,
    )


# (passes, largest angle error (deg), largest apex error (px)): reading again at the pose
# the first pass found corrects what a poor starting pose costs (the second pass's bounds
# are the near-orifice apex's on a binary raster, where the plume's tip is a pixel or two
# wide; on the soft truth of rendered crops it reads closer than free lines, row 66)
PASSES = [(1, 0.3, 0.6), (2, 0.2, 0.5)]


@pytest.mark.parametrize(("passes", "max_deg", "max_px"), PASSES)
@pytest.mark.parametrize("spec", SPECS)
def test_passes_recover_from_a_poor_starting_pose(spec, passes, max_deg, max_px) -> None:
    mask = draw_wedge((512, 512), spec)
    (coarse,) = measure_cones(mask)
    image = np.repeat(mask[..., None] * 255, 3, axis=2).astype(np.uint8)
    readings = [
        Refiner(BrightIsSpray(), flip=flip, passes=passes).refine(image, [off_pose(coarse)])[0]
        for flip in (False, True)
    ]
    for fine in readings:
        assert fine.included_angle_deg == pytest.approx(spec.included_deg, abs=max_deg)
        assert np.hypot(*np.subtract(fine.apex, spec.apex)) < max_px
    # a segmenter that treats a crop and its mirror alike gives the same reading mirrored
    assert readings[1].included_angle_deg == pytest.approx(readings[0].included_angle_deg)


class Counting(BrightIsSpray):
    def __init__(self) -> None:
        self.batches = 0

    def infer(self, batch: np.ndarray) -> np.ndarray:
        self.batches += 1
        return super().infer(batch)


def test_a_plume_is_read_again_only_where_its_pose_moved() -> None:
    spec = SPECS[2]
    mask = draw_wedge((512, 512), spec)
    (coarse,) = measure_cones(mask)
    image = np.repeat(mask[..., None] * 255, 3, axis=2).astype(np.uint8)
    for start, batches in ((coarse, 1), (off_pose(coarse), 2)):
        segmenter = Counting()
        Refiner(segmenter, passes=2).refine(image, [start])
        assert segmenter.batches == batches


def test_measurements_without_angles_pass_through_unchanged() -> None:
    unmeasured = ConeMeasurement(index=0, flags=(QualityFlag.TOO_FEW_EDGE_POINTS,))
    assert pose_of(unmeasured) is None
    image = np.zeros((64, 64, 3), np.uint8)
    assert Refiner(BrightIsSpray()).refine(image, [unmeasured]) == [unmeasured]
    assert Refiner(BrightIsSpray()).refine(image, []) == []


@pytest.mark.parametrize(
    ("weights", "companion"),
    [
        ("weights/default.safetensors", "weights/default.refiner.safetensors"),
        ("w/default.onnx", "w/default.refiner.onnx"),
        ("w/default.int8.onnx", "w/default.int8.refiner.onnx"),
        ("runs/x/best.fp16.engine", "runs/x/best.fp16.refiner.engine"),
    ],
)
def test_the_refiner_of_a_model_file_sits_beside_it_in_its_format(weights, companion) -> None:
    from pathlib import Path

    from spraycv.formats import refiner_companion

    assert refiner_companion(Path(weights)) == Path(companion)
