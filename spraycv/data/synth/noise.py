"""Cheap random textures: smooth 1-D/2-D value noise and fast large blurs."""

from __future__ import annotations

import cv2
import numpy as np


def smooth_noise_2d(
    rng: np.random.Generator, height: int, width: int, cells: float, octaves: int = 1
) -> np.ndarray:
    """Zero-mean smooth noise, roughly unit amplitude.

    Args:
        cells: number of random cells across the longer side (feature size = side / cells).
        octaves: extra octaves at 2x frequency and half amplitude (fractal texture).

    Returns:
        (height, width) float32.
    """
    out = np.zeros((height, width), np.float32)
    amp, total = 1.0, 0.0
    for k in range(octaves):
        c = cells * 2**k
        gh = max(2, round(c * height / max(height, width)) + 2)
        gw = max(2, round(c * width / max(height, width)) + 2)
        # Triangular (two uniforms) rather than normal draws: as smooth, much cheaper.
        grid = rng.random((gh, gw), dtype=np.float32) + rng.random((gh, gw), dtype=np.float32)
        grid = (grid - 1.0) * np.float32(2.45)
        out += amp * cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= 0.5
    return out / total


def smooth_noise_1d(rng: np.random.Generator, n_cells: int, t: np.ndarray) -> np.ndarray:
    """Smooth zero-mean noise of `n_cells` cells on [0, 1], evaluated at `t` (any shape)."""
    knots = rng.standard_normal(n_cells + 1).astype(np.float32)
    # Smoothstep between knots: C1 and cheap.
    x = np.clip(t, 0.0, 1.0) * np.float32(n_cells)
    i = np.minimum(x.astype(np.int32), n_cells - 1)
    f = x - i
    f = f * f * (3.0 - 2.0 * f)
    return knots[i] * (1.0 - f) + knots[i + 1] * f


def big_blur(img: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur of a float image; large sigmas go through a downsampled copy (fast)."""
    if sigma <= 0:
        return img
    if sigma < 6:
        return cv2.GaussianBlur(img, (0, 0), sigma)
    f = max(1, int(sigma // 3))
    h, w = img.shape[:2]
    small = cv2.resize(img, (max(1, w // f), max(1, h // f)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma / f)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def smoothstep(e0: float | np.ndarray, e1: float | np.ndarray, x: np.ndarray) -> np.ndarray:
    """0 below e0, 1 above e1, smooth in between (e1 < e0 gives the reverse ramp)."""
    t = np.asarray((x - e0) / (e1 - e0), dtype=np.float32)
    np.clip(t, 0.0, 1.0, out=t)
    s = 3.0 - 2.0 * t
    t *= t
    t *= s
    return t
