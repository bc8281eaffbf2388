"""Classical spray segmentation: polarity detection, global/adaptive threshold, morphology.

This is how most labs measure today, and the baseline the trained models must beat:
    1. grey levels (BGR -> grey), light Gaussian denoising;
    2. polarity: is the spray brighter (front-lit) or darker (back-lit) than the background?
       The background is the median grey level (the spray rarely covers half the frame);
       the side whose pixels depart further from it is the spray;
    3. threshold (Otsu, triangle, adaptive or fixed) on the spray-is-bright image;
    4. morphology: closing joins droplets and ligaments into the envelope, opening and an
       area floor remove specks, holes are filled.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from spraycv.config.segment import ClassicalSegmenterConfig


class ImageError(ValueError):
    """The image given to a segmenter has the wrong shape or dtype; the message says why."""


def to_gray(image: Any) -> np.ndarray:
    """(H, W) uint8 grey image from (H, W), (H, W, 1), (H, W, 3) BGR or (H, W, 4) BGRA uint8."""
    if not isinstance(image, np.ndarray):
        raise ImageError(f"image must be a numpy array; got {type(image).__name__}")
    if image.dtype != np.uint8:
        hint = ""
        if image.dtype.kind == "f":
            hint = ": scale it to 0..255 and convert (np.clip(img * 255, 0, 255).astype(np.uint8))"
        elif image.dtype == np.uint16:
            hint = ": convert it to 8 bits first ((img >> 8).astype(np.uint8))"
        raise ImageError(f"image dtype {image.dtype} is not supported, expected uint8{hint}")
    if image.ndim == 2:
        gray = image
    elif image.ndim == 3 and image.shape[2] == 1:
        gray = image[:, :, 0]
    elif image.ndim == 3 and image.shape[2] == 3:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    elif image.ndim == 3 and image.shape[2] == 4:
        gray = cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    else:
        raise ImageError(f"image must be (H, W) grey or (H, W, 3) BGR; got shape {image.shape}")
    if gray.shape[0] < 8 or gray.shape[1] < 8:
        raise ImageError(f"image is too small to segment: shape {image.shape}")
    return np.ascontiguousarray(gray)


def detect_polarity(gray: np.ndarray, min_contrast: float = 8.0) -> str:
    """'bright' (front-lit spray on dark) or 'dark' (back-lit spray on bright background).

    The background level is the median; the spray is on the side whose pixels depart from it
    by more in total (beyond min_contrast, so that sensor noise does not vote).
    """
    g = gray.astype(np.float32)
    bg = float(np.median(g))
    above = float(np.clip(g - bg - min_contrast, 0, None).sum())
    below = float(np.clip(bg - g - min_contrast, 0, None).sum())
    return "bright" if above >= below else "dark"


def _odd(n: float) -> int:
    k = max(3, round(n))
    return k if k % 2 else k + 1


def _threshold(img: np.ndarray, cfg: ClassicalSegmenterConfig) -> np.ndarray:
    """Binary (0/255) mask of the bright part of img (H, W) uint8."""
    if cfg.method == "fixed":
        return cv2.threshold(img, cfg.fixed_threshold, 255, cv2.THRESH_BINARY)[1]
    if cfg.method == "adaptive":
        block = _odd(cfg.adaptive_block_frac * min(img.shape))
        return cv2.adaptiveThreshold(
            img, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, -cfg.adaptive_offset
        )
    flag = cv2.THRESH_OTSU if cfg.method == "otsu" else cv2.THRESH_TRIANGLE
    return cv2.threshold(img, 0, 255, cv2.THRESH_BINARY | flag)[1]


def flatten_background(gray: np.ndarray, frac: float) -> np.ndarray:
    """Remove slow illumination changes: grey minus a wide median, re-centred on the median.

    The median over frac of the image side follows gradients and vignetting but not the
    spray's droplets and edges (computed at quarter resolution: the background is smooth).
    """
    h, w = gray.shape
    small = cv2.resize(gray, (max(8, w // 4), max(8, h // 4)), interpolation=cv2.INTER_AREA)
    k = _odd(frac * min(small.shape))
    k = min(k, 255)  # medianBlur's limit for uint8
    bg = cv2.resize(cv2.medianBlur(small, k), (w, h), interpolation=cv2.INTER_LINEAR)
    diff = gray.astype(np.int16) - bg.astype(np.int16) + int(np.median(gray))
    return np.clip(diff, 0, 255).astype(np.uint8)


def drop_bars(binary: np.ndarray, min_aspect: float = 5.0, min_fill: float = 0.7) -> np.ndarray:
    """Remove straight bars (boom pipes, rods, stripes): long, thin, well-filled rectangles.

    A spray envelope is a wedge: it fills about half of its minimum-area rectangle.
    """
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = binary.copy()
    for c in contours:
        (_, _), (rw, rh), _ = cv2.minAreaRect(c)
        lo, hi = sorted((rw, rh))
        if lo < 1 or hi / lo < min_aspect:
            continue
        if cv2.contourArea(c) >= min_fill * rw * rh:
            cv2.drawContours(out, [c], 0, 0, thickness=-1)
    return out


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    """Fill every background region not connected to the image border."""
    h, w = mask.shape
    pad = np.zeros((h + 2, w + 2), np.uint8)
    pad[1:-1, 1:-1] = mask
    flood = pad.copy()
    ff = np.zeros((h + 4, w + 4), np.uint8)
    cv2.floodFill(flood, ff, (0, 0), 1)
    return (pad | (1 - flood))[1:-1, 1:-1]


def segment_classical(
    image: np.ndarray, config: ClassicalSegmenterConfig | None = None
) -> np.ndarray:
    """Segment the spray of one image by thresholding.

    image: (H, W, 3) uint8 BGR or (H, W) uint8 grey (also (H, W, 1) or BGRA).
    Returns the (H, W) uint8 {0, 1} spray mask (all zero when nothing stands out from the
    background by config.min_contrast). Raises ImageError for other shapes and dtypes.
    """
    cfg = config or ClassicalSegmenterConfig()
    gray = to_gray(image)
    if cfg.blur_sigma_px > 0:
        gray = cv2.GaussianBlur(gray, (0, 0), cfg.blur_sigma_px)
    if cfg.flatten_frac > 0:
        gray = flatten_background(gray, cfg.flatten_frac)
    polarity = detect_polarity(gray, cfg.min_contrast) if cfg.polarity == "auto" else cfg.polarity
    img = gray if polarity == "bright" else cv2.bitwise_not(gray)
    if cfg.method != "fixed" and float(img.max()) - float(np.median(img)) < cfg.min_contrast:
        return np.zeros(gray.shape, np.uint8)  # a flat frame: no spray, not noise blown up
    binary = (_threshold(img, cfg) > 0).astype(np.uint8)
    if cfg.drop_bars:
        binary = drop_bars(binary)
    side = min(gray.shape)
    if cfg.close_frac > 0:
        k = _odd(cfg.close_frac * side)
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        binary = cv2.morphologyEx(binary, cv2.MORPH_CLOSE, kernel)
    if cfg.open_px > 1:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (cfg.open_px, cfg.open_px))
        binary = cv2.morphologyEx(binary, cv2.MORPH_OPEN, kernel)
    if cfg.fill_holes:
        binary = _fill_holes(binary)
    if cfg.min_area_frac > 0:
        _n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
        small = stats[:, cv2.CC_STAT_AREA] < cfg.min_area_frac * binary.size
        small[0] = False
        if small.any():
            binary[small[labels]] = 0
    return binary
