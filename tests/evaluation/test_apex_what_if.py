"""benchmarks/apex_what_if.py: a side line fitted through a given apex, and which apex each
mode takes (the what-if of experiments row 64)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from repo_scripts import load_script

what_if = load_script("apex_what_if", "benchmarks")

APEX = np.array([10.0, 10.0])
DIRECTION = np.array([math.cos(math.radians(60)), math.sin(math.radians(60))])


def _side(n: int = 20, outliers: int = 0) -> np.ndarray:
    """(n, 2) points along DIRECTION from APEX at 10-40 px, the first `outliers` 6 px off."""
    r = np.linspace(10, 40, n)[:, None]
    points = APEX + r * DIRECTION
    normal = np.array([-DIRECTION[1], DIRECTION[0]])
    points[:outliers] += 6.0 * normal
    return points


def _angle_deg(u: np.ndarray, v: np.ndarray) -> float:
    return math.degrees(math.acos(min(1.0, abs(float(u @ v)))))


@pytest.mark.parametrize(("n", "outliers", "max_err_deg"), [(20, 0, 1e-4), (20, 2, 0.5)])
def test_the_pinned_line_passes_the_apex_along_the_side(n, outliers, max_err_deg):
    fit = what_if.pinned_line(_side(n, outliers), APEX)
    assert np.allclose(fit.point, APEX)
    assert _angle_deg(fit.direction, DIRECTION) <= max_err_deg
    assert float(fit.direction @ DIRECTION) > 0  # directed away from the apex


def test_too_few_points_give_no_line():
    assert what_if.pinned_line(_side(n=3), APEX) is None


@pytest.mark.parametrize(
    ("reading_apex", "pinned_at"),
    [((11.0, 9.0), APEX), ((60.0, 60.0), None)],  # near the true apex: pinned; far: free
)
def test_the_true_mode_pins_at_the_nearest_true_apex(reading_apex, pinned_at):
    side_line = what_if.apex_source("true", APEX[None, :], np.zeros((0, 2)), frame=0)
    fit = side_line(_side(), np.asarray(reading_apex))
    free = what_if.FREE_SIDE_LINE(_side(), np.asarray(reading_apex))
    if pinned_at is None:
        assert np.allclose(fit.point, free.point) and np.allclose(fit.direction, free.direction)
    else:
        assert np.allclose(fit.point, pinned_at)
