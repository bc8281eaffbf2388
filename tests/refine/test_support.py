"""The refiner's crop support: high on a plume's core, nothing where nothing sprays, and a
reading the refiner finds no spray for is not reported as an angle."""

from __future__ import annotations

import numpy as np
import pytest
from test_refine import SIZE, SPECS, BrightIsSpray

from spraycv.geometry import measure_cones
from spraycv.geometry.analytic import WedgeSpec, draw_wedge, true_length
from spraycv.measure import Measurer
from spraycv.refine.pose import crop_pose, pose_transform, warp_crop
from spraycv.refine.stage import Refiner, crop_support

BAND = (0.1, 0.4)


def pose_and_mask(spec: WedgeSpec):
    mask = draw_wedge((512, 512), spec).astype(np.float32)
    length = true_length((512, 512), spec)
    pose = crop_pose(spec.apex, spec.axis, length, max(spec.half_left_deg, spec.half_right_deg))
    return pose, mask


@pytest.mark.parametrize("spec", SPECS)
def test_the_core_of_a_plume_is_all_spray_and_an_empty_crop_none(spec: WedgeSpec) -> None:
    pose, mask = pose_and_mask(spec)
    prob = warp_crop(mask, pose_transform(pose, SIZE), SIZE)
    core = min(spec.half_left_deg, spec.half_right_deg)
    assert crop_support(prob, pose, core, BAND) > 0.97
    assert crop_support(np.zeros(SIZE), pose, core, BAND) == 0.0
    # the same pose moved off the plume sideways by a length sees (almost) nothing
    moved = crop_pose(np.add(spec.apex, (pose.length, 0.0)), spec.axis, pose.length, core)
    beside = warp_crop(mask, pose_transform(moved, SIZE), SIZE)
    assert crop_support(beside, moved, core, BAND) < 0.05


def test_a_plume_has_support_and_a_reading_in_nothing_is_flagged() -> None:
    """The coarse mask holds two wedges; the image shows only the first (the second is, say,
    a lit part the coarse model took for spray): the refiner sees no spray on its crop."""
    plume, ghost = SPECS[0], WedgeSpec((120.0, 60.0), 0.0, 15.0, 15.0, 200.0)
    coarse_mask = draw_wedge((512, 512), plume) | draw_wedge((512, 512), ghost)
    image = np.repeat(draw_wedge((512, 512), plume)[..., None] * 255, 3, axis=2).astype(np.uint8)
    measurements = measure_cones(coarse_mask)
    refined, support = Refiner(BrightIsSpray()).refine_with_support(image, measurements)
    by_x = sorted(zip(refined, support, strict=True), key=lambda ms: ms[0].apex[0])
    (ghost_m, ghost_s), (plume_m, plume_s) = by_x
    assert plume_s > 0.9 and ghost_s < 0.1

    reading = Measurer(lambda _image: coarse_mask, refiner=Refiner(BrightIsSpray()))(image)
    reasons = {round(m.apex[0] / 100): m.unreliable for m in reading.measurements}
    assert "no_spray_in_crop" in reasons[round(ghost_m.apex[0] / 100)]
    assert "no_spray_in_crop" not in reasons[round(plume_m.apex[0] / 100)]
