"""Confidence and unreliable reasons: each piece of evidence on its own, table-driven."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry import ConeMeasurement, measure_cones
from spraycv.geometry.analytic import WedgeSpec, draw_wedge
from spraycv.geometry.confidence import assess, on_frame_edge_frac

SHAPE = (512, 512)
SPEC = WedgeSpec((256.0, 60.0), 0.0, 25.0, 25.0, 300.0)
CFG = GeometryConfig()


def clean_reading():
    """A straight wedge, bright on a dark background, its apex where the apex head says."""
    mask = draw_wedge(SHAPE, SPEC)
    (m,) = measure_cones(mask)
    image = np.where(mask[..., None] > 0, 200, 30).astype(np.uint8).repeat(3, axis=2)
    return m, image, np.array([SPEC.apex])


def test_a_clean_plume_is_reliable() -> None:
    m, image, apexes = clean_reading()
    assessed = assess(m, SHAPE, CFG, image, apexes)
    assert assessed.unreliable == ""
    assert assessed.confidence > 0.9


def _poor_fit(m, image, apexes):
    return dataclasses.replace(m, fit_rms_right_px=2.0 * CFG.max_fit_rms_px), image, apexes


def _outside(m, image, apexes):
    return dataclasses.replace(m, apex=(256.0, -20.0)), image, apexes


def _flat_image(m, image, apexes):
    return m, np.full_like(image, 120), apexes  # nothing in the image where the lines are


def _side_on_frame_edge(m, image, apexes):
    # a boom's last nozzle cut by the frame: its right side read down the frame's edge
    return _with_right_side(m, (SHAPE[1] - 4.0, 60.0), (0.0, 1.0)), image, apexes


def _recovered_on_frame_edge(m, image, apexes):
    # as the recovery reads a plume at an apex peak: from the refiner's crop, without a band
    m, image, apexes = _side_on_frame_edge(m, image, apexes)
    return dataclasses.replace(m, band=(float("nan"), float("nan"))), image, apexes


def _with_right_side(m, apex, direction):
    """`m` moved to `apex`, its right side turned to `direction`: both lines through the apex."""
    point = np.asarray(apex, float)
    left = dataclasses.replace(m.left_line, point=point)
    right = dataclasses.replace(m.right_line, point=point, direction=np.asarray(direction))
    return dataclasses.replace(m, apex=apex, left_line=left, right_line=right)


def _no_peak_near(m, image, apexes):
    return m, image, np.array([[60.0, 400.0]])


def _no_peak_at_all(m, image, apexes):
    return m, image, np.zeros((0, 2))


def _stripe(m, image, apexes):
    band = np.linspace(m.band[0], m.band[1], 20)
    profile = np.column_stack([band, np.full_like(band, 40.0)])  # a width that never grows
    return dataclasses.replace(m, width_profile=profile), image, apexes


def _side_behind(m, image, apexes):
    return dataclasses.replace(m, half_angle_left_deg=95.0), image, apexes  # back past the nozzle


def _side_across(m, image, apexes):
    # both lines right of the axis: an edge found twice (independent drawer, row 76)
    across = dataclasses.replace(m, half_angle_left_deg=-18.0, half_angle_right_deg=23.0)
    return across, image, apexes


def _sides_miss(m, image, apexes):
    # the apex kept where the lines do not meet (a refined crop's sides against a coarse apex)
    apex = (m.apex[0], m.apex[1] + 0.3 * m.length_px)
    return dataclasses.replace(m, apex=apex), image, np.array([apex])


CASES = [
    (_poor_fit, "poor_fit"),
    (_outside, "apex_outside_image"),
    (_flat_image, "low_edge_contrast"),
    (_no_peak_near, "no_apex_support"),
    (_no_peak_at_all, "no_apex_support"),
    (_stripe, "does_not_widen"),
    (_side_behind, "side_behind_apex"),
    (_side_across, "side_across_axis"),
    (_sides_miss, "sides_miss_apex"),
    (_side_on_frame_edge, "side_on_frame_edge"),
    (_recovered_on_frame_edge, "side_on_frame_edge"),
]


@pytest.mark.parametrize(("spoil", "reason"), CASES, ids=[s.__name__.strip("_") for s, _ in CASES])
def test_each_missing_piece_of_evidence_is_named(spoil, reason: str) -> None:
    m, image, apexes = spoil(*clean_reading())
    assessed = assess(m, SHAPE, CFG, image, apexes)
    assert reason in assessed.unreliable.split(";")
    assert assessed.confidence < CFG.min_confidence
    assert assessed.included_angle_deg == m.included_angle_deg  # the reading is kept, flagged


def test_without_image_or_apex_head_their_evidence_is_not_held_against_it() -> None:
    m, _, _ = clean_reading()
    assessed = assess(m, SHAPE, CFG)  # a mask measured on its own
    assert assessed.unreliable == "" and assessed.confidence > 0.9


EDGE_CASES = [  # (apex, right side's direction, whether that side runs along the edge)
    ((SHAPE[1] - 4.0, 60.0), (0.0, 1.0), True),  # down the edge, 3.5 px inside
    ((SHAPE[1] + 2.0, 60.0), (0.0, 1.0), True),  # down the edge, just outside
    ((SHAPE[1] - 40.0, 60.0), (0.42, 0.91), False),  # leaving the frame across its edge
    ((256.0, 60.0), (0.42, 0.91), False),  # well inside
]


@pytest.mark.parametrize(("apex", "direction", "along"), EDGE_CASES)
def test_a_side_along_the_frame_edge_is_told_from_one_that_crosses_it(apex, direction, along):
    m, _, _ = clean_reading()
    share = on_frame_edge_frac(_with_right_side(m, apex, direction), SHAPE, m.band)
    assert (share > 0.5) == along and (share == 1.0 or not along)


def test_a_reading_without_angles_is_left_as_it_is() -> None:
    unmeasured = ConeMeasurement(index=0)
    assert assess(unmeasured, SHAPE, CFG) is unmeasured


@pytest.mark.parametrize("channels", [1, 3])
def test_grey_samples_are_bilinear_without_a_grey_copy(channels):
    """Edge contrast samples the photo's four neighbours per point (no whole-frame grey
    copy): the same grey levels as cv2.remap on the grey image, NaN off the image."""
    import cv2

    from spraycv.geometry.confidence import _sample

    rng = np.random.default_rng(channels)
    colour = cv2.GaussianBlur(rng.integers(0, 256, (120, 160, 3), dtype=np.uint8), (0, 0), 2)
    image = colour if channels == 3 else cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY)
    grey = cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY).astype(np.float32)
    pts = np.column_stack([rng.uniform(-4, 164, 400), rng.uniform(-4, 124, 400)])
    got = _sample(image, pts)
    inside = (pts[:, 0] <= 159) & (pts[:, 0] >= 0) & (pts[:, 1] <= 119) & (pts[:, 1] >= 0)
    assert np.isnan(got[~inside]).all() and np.isfinite(got[inside]).all()
    xy = pts[inside].astype(np.float32)
    ref = cv2.remap(grey, xy[:, :1], xy[:, 1:], cv2.INTER_LINEAR).ravel()
    assert np.abs(got[inside] - ref).max() < 0.75  # cv2 rounds the grey and the position
    assert np.isnan(_sample(image, np.array([[-1.0, 5.0]]))).all()


def test_a_side_just_across_the_axis_is_kept() -> None:
    """A narrow plume whose axis is a few degrees off has one side just across it."""
    m, image, apexes = clean_reading()
    narrow = dataclasses.replace(m, half_angle_left_deg=-3.0, half_angle_right_deg=9.0)
    assert assess(narrow, SHAPE, CFG, image, apexes).unreliable == ""


@pytest.mark.parametrize(
    ("shape", "rms_over_limit", "poor"),
    [
        ((512, 512), 2.0, True),  # the limit as set
        ((300, 400), 2.0, True),  # a smaller frame keeps it
        ((1024, 1024), 2.0, True),  # ... and so does the largest frame validated
        ((2048, 2048), 1.5, False),  # twice the pixels: 1.5 limits are 0.75 there
        ((2048, 2048), 4.0, True),  # ... and 4 are 2
        ((3000, 4000), 2.5, False),  # a 12 MP photo: 2.9 px per reference pixel
    ],
)
def test_the_fit_limit_is_read_in_reference_pixels(shape, rms_over_limit, poor) -> None:
    m, _, apexes = clean_reading()
    rough = dataclasses.replace(m, fit_rms_right_px=rms_over_limit * CFG.max_fit_rms_px)
    assessed = assess(rough, shape, CFG, None, apexes)
    assert ("poor_fit" in assessed.unreliable.split(";")) is poor


@pytest.mark.parametrize("name", [f"{i:06d}.jpg" for i in range(6)])
def test_a_photo_at_four_times_the_resolution_reads_as_trusted(shipped_pipeline, name) -> None:
    """The same sample frame at 512 px and upscaled to 2048 px (a photo camera's frame):
    the same nozzles trusted, the same angles within a degree."""
    import cv2

    from spraycv.io.images import read_image
    from spraycv.paths import SAMPLES_DIR

    image = read_image(SAMPLES_DIR / "images" / name)
    readings = [
        shipped_pipeline(cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_CUBIC))
        for s in (1, 4)
    ]
    small, large = ([m for m in r.measurements if m.reliable] for r in readings)
    assert len(large) == len(small) > 0
    angles = [sorted(m.included_angle_deg for m in side) for side in (small, large)]
    np.testing.assert_allclose(angles[1], angles[0], atol=1.0)
