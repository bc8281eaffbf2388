"""What the parts of the third drawer share: types, the axis of a tilt, smooth noise and
the box around points."""

from __future__ import annotations

import math

import cv2
import numpy as np

Rng = np.random.Generator
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive)


def unit(deg: float) -> np.ndarray:
    """The unit axis tilted `deg` from image-down, towards image-right when > 0."""
    return np.array([math.sin(math.radians(deg)), math.cos(math.radians(deg))])


def smooth_noise(h: int, w: int, cell: float, rng: Rng) -> np.ndarray:
    """(h, w) float32 smooth noise of unit-ish spread, features about `cell` px wide."""
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    grid = rng.normal(size=(gh, gw)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def crop_of(points: np.ndarray, width: int, height: int, pad: float) -> Box | None:
    """The integer box around points, padded and clipped to the frame (None if empty)."""
    x0, y0 = np.floor(points.min(0) - pad).astype(int)
    x1, y1 = np.ceil(points.max(0) + pad).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None
