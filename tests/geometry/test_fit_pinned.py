"""fit_pinned: a wedge held at a known apex reads the plume's sides from there."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_helpers import axis_of, wedge

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import clean_mask, find_blobs
from spraycv.geometry.wedge import FitOptions, fit_pinned, normal_left

CASES = [  # (tilt, half_left, half_right, axis seed off by), deg
    (0.0, 25.0, 25.0, 15.0),
    (10.0, 40.0, 30.0, -12.0),
    (-20.0, 55.0, 55.0, 10.0),
    (5.0, 72.0, 70.0, -8.0),  # a 142 deg fan
]


def half_angles(fit) -> tuple[float, float]:
    n = normal_left(fit.axis)
    left = math.degrees(math.atan2(float(fit.dir_left @ n), float(fit.dir_left @ fit.axis)))
    right = math.degrees(math.atan2(-float(fit.dir_right @ n), float(fit.dir_right @ fit.axis)))
    return left, right


@pytest.mark.parametrize(("tilt", "half_left", "half_right", "off"), CASES)
def test_a_pinned_wedge_keeps_its_apex_and_finds_the_sides(tilt, half_left, half_right, off):
    mask, spec = wedge(400, tilt, half_left, half_right, 150.0)
    cfg = GeometryConfig()
    (blob,) = find_blobs(clean_mask(mask, cfg.open_px, cfg.close_px), 50, 0.01)
    apex = np.array(spec.apex)
    fit = fit_pinned(blob.fit_pts, blob.hull, apex, axis_of(tilt + off), FitOptions.of(cfg, None))
    assert fit.ok
    assert np.array_equal(fit.apex, apex)
    for line in (fit.left, fit.right):
        assert np.array_equal(line.point, apex)
        assert line.inlier_frac > 0.8
    left, right = half_angles(fit)
    assert left + right == pytest.approx(half_left + half_right, abs=1.5)
    turn = math.degrees(math.acos(min(1.0, float(fit.axis @ axis_of(tilt)))))
    assert turn < 1.5 + abs(half_left - half_right) / 2


def test_a_pinned_wedge_without_sides_is_not_ok():
    """An apex beyond the plume's far end: no band points on either side, no lines."""
    mask, spec = wedge(400, 0.0, 30.0, 30.0, 150.0)
    cfg = GeometryConfig()
    (blob,) = find_blobs(clean_mask(mask, cfg.open_px, cfg.close_px), 50, 0.01)
    beyond = np.array(spec.apex) + 400.0 * axis_of(0.0)
    fit = fit_pinned(blob.fit_pts, blob.hull, beyond, axis_of(0.0), FitOptions.of(cfg, None))
    assert not fit.ok
    assert fit.left is None and fit.right is None
