"""The canonical crop: apex at the top centre, the spray axis pointing down, scaled by the
spray length (pure numpy/OpenCV; pixel centres at integer (col, row), as in spraycv.geometry).

Crop pixel (col, row) sits at distance s = s_start + row * ky from the apex along the axis and
t = (col - (W - 1) / 2) * kx across it (t > 0 on the image's right of an axis pointing down).
The map is affine, so lines stay lines and an edge found in the crop maps back exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# The crop spans the spray from just above the apex to half its length: the angle is defined
# on 10-40 % of the length, and the margins let a misplaced coarse apex still be covered.
S_START_FRAC = -0.1
S_END_FRAC = 0.5
# Across the axis the crop reaches the wider side's edge at 45 % of the length, plus a margin
# of angle; it is clamped so that narrow plumes keep some background and wide ones fit.
EDGE_REACH_FRAC = 0.45
EDGE_MARGIN_DEG = 6.0
HALF_WIDTH_FRAC = (0.2, 1.1)


@dataclass(frozen=True)
class CropPose:
    """Where a canonical crop sits in the image (pixels, unit axis)."""

    apex: tuple[float, float]
    axis: tuple[float, float]  # unit (ux, uy), pointing into the spray
    length: float  # spray length L, px
    half_width: float  # lateral reach of the crop on each side of the axis, px


def crop_pose(
    apex: tuple[float, float], axis: tuple[float, float], length: float, max_half_angle_deg: float
) -> CropPose:
    """The pose for a plume of length L whose wider side opens at `max_half_angle_deg`."""
    ux, uy = axis
    norm = math.hypot(ux, uy)
    if not (math.isfinite(norm) and norm > 1e-9 and math.isfinite(length) and length > 0):
        raise ValueError(f"a crop needs a finite axis and length; got {axis!r}, {length!r}")
    half = min(max(max_half_angle_deg, 0.0) + EDGE_MARGIN_DEG, 80.0)
    reach = EDGE_REACH_FRAC * math.tan(math.radians(half))
    frac = min(max(reach, HALF_WIDTH_FRAC[0]), HALF_WIDTH_FRAC[1])
    return CropPose((float(apex[0]), float(apex[1])), (ux / norm, uy / norm), length, frac * length)


def pose_transform(pose: CropPose, size: tuple[int, int]) -> np.ndarray:
    """(2, 3) affine from crop pixels (col, row, 1) to image pixels (x, y) for a crop (H, W)."""
    h, w = size
    ux, uy = pose.axis
    right = np.array([uy, -ux])  # t > 0: the image's right side of a downward axis
    down = np.array([ux, uy])
    kx = 2.0 * pose.half_width / (w - 1)
    s_start = S_START_FRAC * pose.length
    ky = (S_END_FRAC - S_START_FRAC) * pose.length / (h - 1)
    origin = np.asarray(pose.apex) - (w - 1) / 2 * kx * right + s_start * down
    return np.column_stack([kx * right, ky * down, origin])


def spray_length(transform: np.ndarray, size: tuple[int, int]) -> float:
    """The spray length L (px) of the pose behind a crop (H, W) -> image transform."""
    rows_per_length = (size[0] - 1) / (S_END_FRAC - S_START_FRAC)
    return float(np.hypot(*transform[:, 1])) * rows_per_length


def to_image(points: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """(N, 2) crop (col, row) -> (N, 2) image (x, y)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    return pts @ transform[:, :2].T + transform[:, 2]


def to_crop(points: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """(N, 2) image (x, y) -> (N, 2) crop (col, row): the inverse of `to_image`."""
    inverse = cv2.invertAffineTransform(transform)
    return to_image(points, inverse)


def crop_row(s_frac: float, size: tuple[int, int]) -> float:
    """The (fractional) crop row at distance s_frac * L from the apex."""
    h = size[0]
    return (s_frac - S_START_FRAC) / (S_END_FRAC - S_START_FRAC) * (h - 1)


def warp_crop(
    image: np.ndarray, transform: np.ndarray, size: tuple[int, int], interpolation: int = 1
) -> np.ndarray:
    """Sample the crop (H, W[, C]) from `image` (outside the image: 0)."""
    h, w = size
    return cv2.warpAffine(
        image,
        transform.astype(np.float64),
        (w, h),
        flags=interpolation | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=0,
    )


def wedge_mask(
    pose: CropPose, size: tuple[int, int], half_angle_deg: float, band: tuple[float, float]
) -> np.ndarray:
    """(H, W) bool: the crop pixels within `half_angle_deg` of the axis, at distances from
    `band[0]` to `band[1]` of the spray length from the apex (the core of a plume at `pose`)."""
    h, w = size
    kx = 2.0 * pose.half_width / (w - 1)
    ky = (S_END_FRAC - S_START_FRAC) * pose.length / (h - 1)
    s = S_START_FRAC * pose.length + np.arange(h)[:, None] * ky  # (H, 1) along the axis
    t = np.abs(np.arange(w)[None, :] - (w - 1) / 2) * kx  # (1, W) across it
    in_band = (s >= band[0] * pose.length) & (s <= band[1] * pose.length)
    return in_band & (t <= s * math.tan(math.radians(min(max(half_angle_deg, 0.0), 85.0))))


def wedge_support(prob: np.ndarray, wedge: np.ndarray) -> float:
    """The mean spray probability of a (H, W) crop over a wedge mask (NaN when it is empty)."""
    return float(prob[wedge].mean()) if wedge.any() else math.nan
