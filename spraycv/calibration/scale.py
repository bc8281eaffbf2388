"""Scale from two points a known distance apart (a ruler, two marks on the rig)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


class CalibrationError(ValueError):
    """A calibration input that cannot give a scale; the message says which and why."""


def check_length_mm(value: float, name: str) -> float:
    """`value` as a float if it is a finite length > 0 mm, else CalibrationError naming it."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise CalibrationError(f"{name} must be a number of mm; got {value!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise CalibrationError(f"{name} must be a finite length > 0 mm; got {value!r}")
    return value


def _point(value: Sequence[float], name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise CalibrationError(f"{name} must be an (x, y) pair of numbers; got {value!r}") from None
    if arr.shape != (2,):
        raise CalibrationError(f"{name} must be an (x, y) pair of numbers; got {value!r}")
    if not np.isfinite(arr).all():
        raise CalibrationError(f"{name} must have finite coordinates; got {value!r}")
    return arr


def scale_from_points(p1: Sequence[float], p2: Sequence[float], distance_mm: float) -> float:
    """Image scale from two image points whose real distance is known.

    Parameters
    ----------
    p1, p2 : sequence of 2 float
        The points as (x, y) pixel coordinates (pixel centres at integers, docs/cone_angle.md).
    distance_mm : float
        Their real distance, mm (> 0).

    Returns
    -------
    float
        The scale in mm per pixel: ``distance_mm / |p2 - p1|``.

    Raises
    ------
    CalibrationError
        (a ValueError) for a point that is not a finite (x, y) pair, a distance that is not
        a finite number > 0, or coincident points.
    """
    a, b = _point(p1, "p1"), _point(p2, "p2")
    distance_mm = check_length_mm(distance_mm, "distance_mm")
    distance_px = float(np.hypot(*(b - a)))
    if distance_px == 0.0:
        raise CalibrationError(f"p1 and p2 coincide at {tuple(a.tolist())}: no distance to scale")
    return distance_mm / distance_px
