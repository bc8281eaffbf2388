"""A mask redrawn from its readings (spraycv.geometry.plume_shape): far-field wander is put
back on the fitted sides; untrusted readings and other components keep the segmented pixels."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from spraycv.config.geometry import GeometryConfig, MaskShapeConfig
from spraycv.geometry import ConeMeasurement, Line, measure_cones
from spraycv.geometry.analytic import WedgeSpec, draw_wedge
from spraycv.geometry.plume_shape import shaped_mask
from spraycv.measure import Measurer
from spraycv.training.metrics import iou_dice

SHAPE = (512, 512)
SPECS = [  # narrow, wide with a flat front, tilted, asymmetric
    WedgeSpec((256.0, 60.0), 0.0, 12.0, 12.0, 300.0, ragged=0.04),
    WedgeSpec((250.0, 80.0), 8.0, 45.0, 45.0, 240.0, flatness=0.6),
    WedgeSpec((300.0, 90.0), -25.0, 20.0, 30.0, 260.0, ragged=0.04, seed=3),
    WedgeSpec((250.0, 40.0), 0.0, 35.0, 20.0, 330.0),
]


def _at(spec: WedgeSpec, angle_deg: float, frac: float) -> tuple[int, int]:
    """The pixel at `angle_deg` from the axis (towards n_left) and frac * radius."""
    ux, uy = spec.axis
    a = math.radians(angle_deg)
    dx, dy = ux * math.cos(a) - uy * math.sin(a), uy * math.cos(a) + ux * math.sin(a)
    r = frac * spec.radius
    return round(spec.apex[0] + r * dx), round(spec.apex[1] + r * dy)


def _wandering(spec: WedgeSpec) -> np.ndarray:
    """The true mask with its far-field sides wandering as a network draws them: a bulge
    outside the left side at 0.7 L and a bite into the right side at 0.6 L."""
    mask = draw_wedge(SHAPE, spec).copy()
    cv2.circle(mask, _at(spec, spec.half_left_deg + 2.0, 0.7), 9, 1, -1)
    cv2.circle(mask, _at(spec, -spec.half_right_deg + 1.0, 0.6), 9, 0, -1)
    return mask


def _reading(spec: WedgeSpec) -> ConeMeasurement:
    (m,) = measure_cones(draw_wedge(SHAPE, spec))
    assert m.reliable
    return m


@pytest.mark.parametrize("spec", SPECS)
def test_far_field_wander_goes_back_to_the_fitted_sides(spec: WedgeSpec) -> None:
    truth = draw_wedge(SHAPE, spec)
    wandering = _wandering(spec)
    shaped = shaped_mask(wandering, [_reading(spec)], MaskShapeConfig())
    assert shaped.dtype == np.uint8 and shaped.shape == SHAPE
    before, after = iou_dice(wandering, truth)[0], iou_dice(shaped, truth)[0]
    assert after > before and after >= 0.985
    bulge = _at(spec, spec.half_left_deg + 2.0, 0.7)
    bite = _at(spec, -spec.half_right_deg + 1.0, 0.6)
    assert wandering[bulge[1], bulge[0]] == 1 and shaped[bulge[1], bulge[0]] == 0
    assert wandering[bite[1], bite[0]] == 0 and shaped[bite[1], bite[0]] == 1


NAN_LINE = Line((math.nan, math.nan), (math.nan, math.nan))
KEEP_CASES = {
    "not trusted": lambda m: replace(m, unreliable="low confidence"),
    "no angle": lambda m: replace(m, included_angle_deg=math.nan),
    "a side missing": lambda m: replace(m, left_line=NAN_LINE),
    "no length": lambda m: replace(m, length_px=math.nan),
}


@pytest.mark.parametrize("change", KEEP_CASES.values(), ids=KEEP_CASES.keys())
def test_a_reading_that_is_not_trusted_keeps_the_segmented_mask(change) -> None:
    wandering = _wandering(SPECS[0])
    shaped = shaped_mask(wandering, [change(_reading(SPECS[0]))], MaskShapeConfig())
    assert np.array_equal(shaped, wandering)


def test_turned_off_or_nothing_read_keeps_the_mask() -> None:
    wandering = _wandering(SPECS[2])
    off = MaskShapeConfig(enabled=False)
    assert shaped_mask(wandering, [_reading(SPECS[2])], off) is wandering
    assert np.array_equal(shaped_mask(wandering, [], MaskShapeConfig()), wandering)
    empty = np.zeros(SHAPE, np.uint8)
    assert not shaped_mask(empty, [_reading(SPECS[2])], MaskShapeConfig()).any()


def test_other_components_neither_extend_the_front_nor_get_trimmed() -> None:
    spec = SPECS[0]
    truth = draw_wedge(SHAPE, spec)
    mask = truth.copy()
    beyond = _at(spec, 0.0, 1.15)  # a separate blob on the axis past the front
    beside = _at(spec, spec.half_left_deg + 5.0, 0.9)  # and one just outside a side
    cv2.circle(mask, beyond, 6, 1, -1)
    cv2.circle(mask, beside, 3, 1, -1)
    assert cv2.connectedComponents(mask)[0] == 4  # background, plume, two blobs
    shaped = shaped_mask(mask, [_reading(spec)], MaskShapeConfig())
    assert shaped[beyond[1], beyond[0]] == 1 and shaped[beside[1], beside[0]] == 1
    gap = _at(spec, 0.0, 1.06)  # between the front and the blob: not filled
    assert shaped[gap[1], gap[0]] == 0
    assert iou_dice(shaped & truth, truth)[0] >= 0.985


@pytest.mark.parametrize(
    ("field", "value"),
    [("margin_deg", -1.0), ("margin_deg", 46.0), ("ray_bin_deg", 0.0), ("front_window", 0)],
)
def test_config_bounds(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        MaskShapeConfig(**{field: value})


@pytest.mark.parametrize("enabled", [True, False])
def test_the_pipeline_returns_the_redrawn_mask(enabled: bool) -> None:
    """Measurer's reading carries the redrawn mask (what overlays draw and eval scores),
    read from the same measurements as the segmented one; turned off, the segmented mask."""
    spec = SPECS[2]
    wandering = _wandering(spec)
    config = GeometryConfig(mask_shape=MaskShapeConfig(enabled=enabled))
    truth = draw_wedge(SHAPE, spec)
    image = np.repeat(truth[..., None] * np.uint8(200), 3, axis=2)  # a lit plume on black
    reading = Measurer(lambda _: wandering, config=config)(image)
    (m,) = reading.measurements
    assert m.reliable, m.unreliable
    expected = shaped_mask(wandering, reading.measurements, config.mask_shape)
    assert np.array_equal(reading.mask, expected) and (enabled or reading.mask is wandering)
    gain = iou_dice(reading.mask, truth)[0] - iou_dice(wandering, truth)[0]
    assert (gain > 0.005) if enabled else gain == 0


def test_rays_that_leave_through_a_narrow_side_still_reach_the_front() -> None:
    """A side drawn 4 deg narrow in the far field: the rays next to it leave the segmented
    plume through that side, short of the front; the outer rays are held out to the front."""
    spec = SPECS[3]
    truth = draw_wedge(SHAPE, spec)
    narrow = draw_wedge(SHAPE, replace(spec, half_left_deg=spec.half_left_deg - 4.0))
    far = np.zeros(SHAPE, np.uint8)
    cv2.circle(far, (round(spec.apex[0]), round(spec.apex[1])), round(0.5 * spec.radius), 1, -1)
    segmented = np.where(far > 0, truth, narrow).astype(np.uint8)
    reading = _reading(spec)
    held = shaped_mask(segmented, [reading], MaskShapeConfig())
    free = shaped_mask(segmented, [reading], MaskShapeConfig(edge_frac=0.0))
    corner = _at(spec, spec.half_left_deg - 1.0, 0.97)
    assert segmented[corner[1], corner[0]] == 0 and free[corner[1], corner[0]] == 0
    assert held[corner[1], corner[0]] == 1
    assert iou_dice(held, truth)[0] > max(iou_dice(free, truth)[0], iou_dice(segmented, truth)[0])
