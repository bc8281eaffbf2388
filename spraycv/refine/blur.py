"""Camera blur for the refiner's training crops: defocus (a Gaussian) or motion (a line),
in image pixels.

Averaged and long exposures, defocus and camera or boom motion smear a plume's edge over a
few pixels while the truth (the spray's envelope) stays where it was. A refiner that has
seen mostly crisp edges draws its edge inside such a ramp and narrows the plume (experiments
row 66: long exposures with 7 px of motion, averaged dim frames). The kernel is applied to
the crop's footprint in the image before the crop is cut, so a blur is round (or straight)
in the image whatever the crop's scale, and only that footprint is filtered.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from spraycv.config.refine import CropBlur
from spraycv.refine.pose import to_image, warp_crop


def gaussian_kernel(sigma_px: float) -> np.ndarray:
    """(K, K) float32 Gaussian of `sigma_px`, summing to 1 (K = 2 * ceil(3 sigma) + 1)."""
    radius = max(1, math.ceil(3.0 * sigma_px))
    column = cv2.getGaussianKernel(2 * radius + 1, sigma_px, cv2.CV_32F)
    return column @ column.T


def motion_kernel(length_px: float, angle_deg: float) -> np.ndarray:
    """(K, K) float32 anti-aliased line of `length_px` at `angle_deg`, summing to 1."""
    radius = max(1, math.ceil(length_px / 2.0))
    size = 2 * radius + 1
    scale = 16  # drawn on a finer grid, then averaged down: a sub-pixel line
    fine = np.zeros((size * scale, size * scale), np.float32)
    c = (size * scale - 1) / 2.0
    dx = 0.5 * length_px * scale * math.cos(math.radians(angle_deg))
    dy = 0.5 * length_px * scale * math.sin(math.radians(angle_deg))
    ends = [(round(c - dx), round(c - dy)), (round(c + dx), round(c + dy))]
    cv2.line(fine, ends[0], ends[1], 1.0, thickness=scale, lineType=cv2.LINE_AA)
    kernel = cv2.resize(fine, (size, size), interpolation=cv2.INTER_AREA)
    return kernel / kernel.sum()


def random_kernel(blur: CropBlur, rng: np.random.Generator) -> np.ndarray:
    """A defocus or a motion kernel (one chance in two) with a size drawn from `blur`."""
    if rng.random() < 0.5:
        return gaussian_kernel(rng.uniform(*blur.gaussian_px))
    return motion_kernel(rng.uniform(*blur.motion_px), rng.uniform(0.0, 180.0))


def blurred_crop(
    image: np.ndarray, transform: np.ndarray, size: tuple[int, int], kernel: np.ndarray
) -> np.ndarray:
    """The (H, W[, C]) crop of `image` at `transform` (crop -> image) after filtering with
    `kernel` (image px); only the crop's footprint and the kernel's reach are filtered."""
    h, w = size
    corners = to_image(np.array([[0, 0], [w - 1, 0], [0, h - 1], [w - 1, h - 1]]), transform)
    reach = kernel.shape[0] // 2 + 2  # the kernel plus the bilinear sample's neighbours
    x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - reach, 0)
    x1 = min(int(np.ceil(corners[:, 0].max())) + reach + 1, image.shape[1])
    y1 = min(int(np.ceil(corners[:, 1].max())) + reach + 1, image.shape[0])
    if x1 <= x0 or y1 <= y0:  # the crop lies wholly outside the image
        return warp_crop(image, transform, size)
    part = cv2.filter2D(image[y0:y1, x0:x1], -1, kernel, borderType=cv2.BORDER_REPLICATE)
    shifted = transform.astype(np.float64).copy()
    shifted[:, 2] -= (x0, y0)
    return warp_crop(part, shifted, size)
