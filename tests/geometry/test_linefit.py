"""Robust line fits: exact on clean points, unmoved by outliers, any orientation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spraycv.geometry.linefit import fit_line, group_lines, intersect, robust_group_lines


def _line(angle_deg: float, n: int = 80, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = math.radians(angle_deg)
    t = np.linspace(-60, 60, n)
    pts = np.column_stack([100 + t * math.cos(a), 50 + t * math.sin(a)])
    return pts + rng.normal(0, noise, pts.shape)


def _angle_err(d: np.ndarray, angle_deg: float) -> float:
    got = math.degrees(math.atan2(d[1], d[0])) % 180.0
    return abs((got - angle_deg % 180.0 + 90.0) % 180.0 - 90.0)


@pytest.mark.parametrize("angle", [0, 17, 45, 89.9, 90, 123, 179])
@pytest.mark.parametrize("method", ["huber", "ransac", "lsq"])
def test_exact_on_clean_points(angle: float, method: str) -> None:
    fit = fit_line(_line(angle), method=method)
    assert _angle_err(fit.direction, angle) < 1e-6
    assert fit.rms < 1e-6 and fit.n_inliers == fit.n_points == 80
    assert abs(np.hypot(*fit.direction) - 1) < 1e-12


@pytest.mark.parametrize("method", ["huber", "ransac"])
def test_outliers_do_not_pull_the_line(method: str) -> None:
    pts = _line(30, n=100, noise=0.3, seed=1)
    rng = np.random.default_rng(2)
    bad = rng.choice(100, 25, replace=False)
    pts[bad] += rng.uniform(5, 20, (25, 1)) * np.array([[-0.5, math.cos(math.radians(30))]])
    fit = fit_line(pts, method=method, outlier_px=3.0)
    assert _angle_err(fit.direction, 30) < 0.3
    assert fit.n_inliers <= 80 and fit.rms < 0.5


def test_one_sided_trimming_ignores_bumps_outside() -> None:
    pts = _line(0, n=120)
    pts[::5, 1] += 2.0  # bumps on one side (+y is outside here)
    x, y, g = pts[:, 0], pts[:, 1], np.zeros(120, dtype=np.int64)
    lines, inl, inward = robust_group_lines(x, y, g, 1, outward=np.array([[0.0, 1.0]]))
    assert abs(lines.cy[0] - 50.0) < 1e-6 and abs(lines.dy[0]) < 1e-9
    assert inl.sum() == 96 and not inward.any()


def test_group_lines_fits_groups_independently() -> None:
    a, b = _line(10), _line(100)
    pts = np.concatenate([a, b])
    g = np.repeat([0, 1], 80)
    lines = group_lines(pts[:, 0], pts[:, 1], g, 2)
    assert _angle_err(np.array([lines.dx[0], lines.dy[0]]), 10) < 1e-6
    assert _angle_err(np.array([lines.dx[1], lines.dy[1]]), 100) < 1e-6
    assert list(lines.count) == [80, 80]


def test_intersect() -> None:
    p = intersect(
        np.array([0.0, 0.0]), np.array([1.0, 0.0]), np.array([5.0, 5.0]), np.array([0.0, 1.0])
    )
    assert p is not None and np.allclose(p, [5.0, 0.0])
    assert intersect(np.zeros(2), np.array([1.0, 0]), np.ones(2), np.array([1.0, 0])) is None


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least 2 points"):
        fit_line(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="unknown robust fit method 'l1'"):
        fit_line(_line(0), method="l1")
