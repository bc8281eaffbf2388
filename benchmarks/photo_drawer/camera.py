"""The camera: exposure, colour cast, vignetting, blur and defocus, sensor noise."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from photo_drawer.common import Rng


def camera(img: np.ndarray, rng: Rng) -> tuple[np.ndarray, dict[str, Any]]:
    """The camera: exposure, colour cast, vignetting, lens blur (sometimes defocus), shot
    and read noise; (H, W, 3) uint8 and what it did."""
    h, w = img.shape[:2]
    img = img * rng.uniform(0.85, 1.15)
    cast = rng.random() < 0.35
    if cast:
        img = img * (1 + rng.normal(0, 0.07, 3))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = (((xx - w / 2) / (w / 2)) ** 2 + ((yy - h / 2) / (h / 2)) ** 2) / 2
    vignette = rng.uniform(0.05, 0.4)
    img = img * (1 - vignette * r2)[..., None]
    defocus = float(rng.uniform(1, 3)) if rng.random() < 0.3 else 0.0
    if defocus:
        k = math.ceil(defocus)
        disk = cv2.circle(
            np.zeros((2 * k + 1, 2 * k + 1), np.float32), (k, k), k, 1.0, -1, cv2.LINE_AA
        )
        img = cv2.filter2D(img, -1, disk / disk.sum())
    img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), rng.uniform(0.4, 0.8))
    gain, read = rng.uniform(0.05, 0.6), rng.uniform(0.8, 4)
    img = img + rng.normal(0, 1, img.shape) * np.sqrt(gain * np.clip(img, 0, 255) + read * read)
    out = np.clip(np.round(img), 0, 255).astype(np.uint8)
    return out, {
        "cast": cast,
        "vignette": vignette,
        "defocus_px": defocus,
        "gain": gain,
        "read": read,
    }
