"""benchmarks/apex_what_if.py: which apex each mode fits the side lines through (the
what-if of experiments rows 64 and 66)."""

from __future__ import annotations

import numpy as np
import pytest
from repo_scripts import load_script

from spraycv.geometry.analytic import WedgeSpec, draw_wedge, true_length
from spraycv.refine.edges import READ_BAND, side_lines
from spraycv.refine.pose import crop_pose, pose_transform, warp_crop

what_if = load_script("apex_what_if", "benchmarks")

SPEC = WedgeSpec((256.0, 60.0), 0.0, 20.0, 20.0, 300.0)
ELSEWHERE = np.array([258.0, 59.0])  # 2.2 px from the true apex


def _crop(apex_shift: tuple[float, float]):
    mask = draw_wedge((512, 512), SPEC).astype(np.float32)
    length = true_length((512, 512), SPEC)
    pose = crop_pose(np.add(SPEC.apex, apex_shift), SPEC.axis, length, 20.0)
    transform = pose_transform(pose, (128, 128))
    return warp_crop(mask, transform, (128, 128)), transform


@pytest.mark.parametrize(
    ("mode", "shift", "pinned_at"),
    [
        ("true", (1.0, -1.0), ELSEWHERE),  # the crop near that apex: pinned there
        ("true", (0.0, -20.0), None),  # far from it: free
        ("own", (1.0, -1.0), np.add(SPEC.apex, (1.0, -1.0))),  # at the crop's own apex
        ("free", (1.0, -1.0), None),
    ],
)
def test_each_mode_pins_at_its_apex(mode, shift, pinned_at):
    prob, transform = _crop(shift)
    # called as the refine stage calls side_lines: with the apex channel's reading and source
    channel = np.add(SPEC.apex, (5.0, 5.0))
    lines = what_if.apex_source(mode, ELSEWHERE[None, :], np.zeros((0, 2)), frame=0)(
        prob, transform, READ_BAND, (0.0, 0.25), channel, "mean"
    )
    if pinned_at is None:
        free = side_lines(prob, transform, READ_BAND, None)
        assert all(np.allclose(a.point, b.point) for a, b in zip(lines, free, strict=True))
    else:
        assert all(np.allclose(line.point, pinned_at) for line in lines)


def test_the_near_mode_is_the_shipped_fit():
    prob, transform = _crop((1.0, -1.0))
    lines = what_if.apex_source("near", np.zeros((0, 2)), np.zeros((0, 2)), frame=0)(
        prob, transform, READ_BAND
    )
    shipped = side_lines(prob, transform)
    assert all(np.allclose(a.direction, b.direction) for a, b in zip(lines, shipped, strict=True))
