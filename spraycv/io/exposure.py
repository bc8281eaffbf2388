"""Exposure normalisation: dim, under-exposed and high-bit-depth frames brought to one range.

High-speed and machine-vision cameras write 10-12-bit data, in a 16-bit container aligned
to its low bits (0 .. 4095) or its high bits, and often expose far below full scale. Read
as 8 bits by dropping the low byte, such a frame is black; shown as it is, a dim frame is
a faint grey cone that a model trained on well-exposed images does not see.

Two steps, each a pure function:
- `to_uint8`: how every 16-bit image is read (spraycv.io.images): a linear stretch between
  low and high percentiles of its brightness, whatever the bit alignment;
- `normalise_exposure`: what a model does to every input (its sidecar's
  `normalization.exposure`, the same in training and at inference, after the resize to
  the input size): nothing (`none`, the default of older models), the same percentile
  stretch (`stretch`), that stretch only where the input is under-exposed (`stretch_dim`:
  its bright percentile below `dim_below` grey levels, so that a well-exposed input goes in
  as it is and a dim 8-bit frame goes in as a 16-bit one is read), or CLAHE on the
  lightness (`clahe`).

A minimum span keeps a frame with nothing in it (a black frame, a bare wall) from being
stretched until its noise looks like spray.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np

ExposureMode = Literal["none", "stretch", "stretch_dim", "clahe"]

LUT_ROWS = 256  # rows of a 16-bit image looked up at once (bounds the memory of a large one)
READ_PERCENTILES = (0.5, 99.8)
READ_MIN_SPAN = 64.0
"""16-bit reads: the stretch never spans fewer than this many counts (read noise of a few
counts on a black 12-bit frame stays dark)."""


@dataclass(frozen=True)
class Exposure:
    """A model's exposure normalisation (stored in its sidecar, used in training and at
    inference).

    mode: none | stretch | stretch_dim | clahe. stretch maps the `low_pct` and `high_pct`
    percentiles of the brightness (the brightest channel) linearly to 0 and 255, never over
    fewer than `min_span` grey levels; stretch_dim does so only when the `high_pct`
    percentile is below `dim_below`; clahe equalises the lightness in tiles with `clahe_clip`.
    """

    mode: ExposureMode = "none"
    low_pct: float = 0.5
    high_pct: float = 99.8
    min_span: float = 24.0
    clahe_clip: float = 2.0
    dim_below: float = 64.0

    def __post_init__(self) -> None:
        if self.mode not in NORMALISERS:
            raise ValueError(
                f"exposure mode {self.mode!r} is not one of {', '.join(sorted(NORMALISERS))}"
            )
        if not 0.0 <= self.low_pct < self.high_pct <= 100.0:
            raise ValueError(
                f"exposure percentiles must be 0 <= low < high <= 100; "
                f"got {self.low_pct}, {self.high_pct}"
            )
        if self.min_span <= 0 or self.clahe_clip <= 0 or self.dim_below <= 0:
            raise ValueError("exposure min_span, clahe_clip and dim_below must be > 0")


def brightness(image: np.ndarray) -> np.ndarray:
    """(H, W) brightness of an (H, W) or (H, W, C) image: its brightest channel."""
    if image.ndim == 2:
        return image
    out = image[..., 0].copy()
    for c in range(1, image.shape[2]):
        np.maximum(out, image[..., c], out=out)  # one buffer: a 20 MP frame stays 20 MP
    return out


def _counts(flat: np.ndarray, bins: int) -> np.ndarray:
    """(bins,) int64 count of each value of a 1-D uint8 or uint16 array of at most 2**24
    values: np.bincount's, from OpenCV's histogram (bincount first copies the values to
    8-byte ints, three times the cost on a frame)."""
    hist = cv2.calcHist([flat[None]], [0], None, [bins], [0, bins])  # one row: N x 1 is slow
    return hist.ravel().astype(np.int64)


def integer_percentiles(values: np.ndarray, pcts: tuple[float, ...]) -> np.ndarray:
    """np.percentile(values, pcts) (linear interpolation) of unsigned integer data, from its
    histogram instead of a sort: the same numbers, several times faster on a frame.

    Args:
        values: uint8 or uint16 array of any shape (not empty).
    """
    flat = values.ravel()
    step = 1 << 20  # a million values at a time: float32 counts up to 2**24 are exact
    bins = int(np.iinfo(values.dtype).max) + 1
    counts = sum(_counts(flat[i : i + step], bins) for i in range(0, flat.size, step))
    cum = np.cumsum(counts)
    rank = np.asarray(pcts, dtype=np.float64) / 100.0 * (cum[-1] - 1)
    lo = np.floor(rank)
    below = np.searchsorted(cum, lo, side="right")  # the lo-th smallest value
    above = np.searchsorted(cum, np.minimum(lo + 1, cum[-1] - 1), side="right")
    return below + (rank - lo) * (above - below)


def percentile_stretch(
    image: np.ndarray, low_pct: float, high_pct: float, min_span: float
) -> np.ndarray:
    """Linear stretch of the brightness percentiles [low, high] to [0, 255].

    Args:
        image: (H, W) or (H, W, C) uint8 or uint16.
        min_span: the stretch never spans fewer than this many input levels.
    Returns:
        uint8 array of the same shape.
    """
    lo, hi = integer_percentiles(brightness(image), (low_pct, high_pct))
    return stretch_levels(image, float(lo), float(hi), min_span)


def stretch_levels(image: np.ndarray, lo: float, hi: float, min_span: float) -> np.ndarray:
    """Linear stretch of the input levels [lo, hi] (never fewer than `min_span` apart) to
    [0, 255]: (H, W) or (H, W, C) uint8 or uint16 -> uint8 of the same shape."""
    gain = 255.0 / max(hi - lo, min_span)
    levels = np.arange(np.iinfo(image.dtype).max + 1, dtype=np.float64)
    lut = np.clip((levels - lo) * gain + 0.5, 0.0, 255.0).astype(np.uint8)
    if image.dtype == np.uint8:
        return cv2.LUT(image, lut)  # one table lookup per pixel
    out = np.empty(image.shape, np.uint8)
    for top in range(0, image.shape[0], LUT_ROWS):  # indexing makes an 8-byte index per
        out[top : top + LUT_ROWS] = lut[image[top : top + LUT_ROWS]]  # pixel: a band at a time
    return out


def bright_level(image: np.ndarray, exposure: Exposure | None = None) -> float | None:
    """The bright percentile (`exposure.high_pct` of the brightness, grey levels) of an 8-bit
    (H, W[, C]) image; None for any other (a 16-bit file is stretched when it is read)."""
    exposure = exposure or Exposure()
    if image.dtype != np.uint8 or image.size == 0:
        return None
    (high,) = integer_percentiles(brightness(image), (exposure.high_pct,))
    return float(high)


BLANK_SPAN = 8.0  # grey levels between BLANK_PERCENTILES below which a frame shows nothing
BLANK_PERCENTILES = (0.5, 99.99)  # a spray on 1 pixel in 10,000 is not nothing; hot pixels are
BLANK_PIXELS = 1 << 18  # a larger frame is judged on every n-th row and column, about this many


def brightness_span(image: np.ndarray) -> float | None:
    """Grey levels between the BLANK_PERCENTILES of an 8-bit (H, W[, C]) frame's brightness
    (a larger frame judged on every n-th row and column); None for any other."""
    if image.dtype != np.uint8 or image.size == 0:
        return None
    step = max(1, int(math.sqrt(image.shape[0] * image.shape[1] / BLANK_PIXELS)))
    low, high = integer_percentiles(brightness(image[::step, ::step]), BLANK_PERCENTILES)
    return float(high) - float(low)


def is_blank(image: np.ndarray) -> bool:
    """Whether an 8-bit (H, W[, C]) frame is flat: its brightness spans fewer than BLANK_SPAN
    grey levels between its BLANK_PERCENTILES (a capped lens, a dead or saturated sensor).
    No spray can be seen on it, and the network, never trained on flat frames, would draw
    one over most of it (66 % of a black frame)."""
    span = brightness_span(image)
    return span is not None and span < BLANK_SPAN


def flat_text() -> str:
    """What a flat frame means for its readings (one phrase for every place that says it)."""
    return (
        f"a flat frame (its brightness spans fewer than {BLANK_SPAN:.0f} grey levels: a "
        "covered lens, a saturated or dead sensor)"
    )


def under_exposed_level(image: np.ndarray, exposure: Exposure | None = None) -> float | None:
    """`bright_level` when it lies below `exposure.dim_below`, else None.

    On the held-out dim frames, those below 64 levels held 212 of the 215 nozzles the
    shipped pipeline missed (two in three of their nozzles); no well-exposed held-out frame
    falls below it (docs/experiments.md, row 77)."""
    exposure = exposure or Exposure()
    level = bright_level(image, exposure)
    return level if level is not None and level < exposure.dim_below else None


def under_exposed_text(level: float, exposure: Exposure | None = None) -> str:
    """What an under-exposed frame's `bright_level` means for its readings (one phrase for
    every place that says it)."""
    share = 100.0 - (exposure or Exposure()).high_pct
    return (
        f"under-exposed (the brightest {share:.1f} % of pixels reach {level:.0f} of 255 grey "
        "levels): plumes may be missed"
    )


def exposure_note(image: np.ndarray, name: str) -> str | None:
    """One line naming the file when its frame is under-exposed (`under_exposed_level`) or
    flat (`is_blank`: nothing on it can be seen, a white frame as much as a black one)."""
    level = under_exposed_level(image)
    if level is not None:
        return (
            f"{name}: {under_exposed_text(level)}, so no plume here does not mean no spray; "
            "raise the exposure or gain"
        )
    if is_blank(image):
        return f"{name}: {flat_text()}, so no plume here does not mean no spray; check the camera"
    return None


def to_uint8(image: np.ndarray) -> np.ndarray:
    """A decoded image as 8 bits: uint8 as it is; 16-bit stretched between its brightness
    percentiles READ_PERCENTILES (never over fewer than READ_MIN_SPAN counts)."""
    if image.dtype == np.uint8:
        return image
    if image.dtype != np.uint16:
        raise ValueError(f"expected a uint8 or uint16 image; got {image.dtype}")
    return percentile_stretch(image, *READ_PERCENTILES, READ_MIN_SPAN)


def _none(image: np.ndarray, exposure: Exposure) -> np.ndarray:
    return image


def _stretch(image: np.ndarray, exposure: Exposure) -> np.ndarray:
    return percentile_stretch(image, exposure.low_pct, exposure.high_pct, exposure.min_span)


def _stretch_dim(image: np.ndarray, exposure: Exposure) -> np.ndarray:
    pcts = (exposure.low_pct, exposure.high_pct)
    lo, hi = integer_percentiles(brightness(image), pcts)
    if hi >= exposure.dim_below:
        return image  # well exposed: the input as the model was trained on it
    return stretch_levels(image, float(lo), float(hi), exposure.min_span)


def _clahe(image: np.ndarray, exposure: Exposure) -> np.ndarray:
    clahe = cv2.createCLAHE(clipLimit=exposure.clahe_clip, tileGridSize=(8, 8))
    if image.ndim == 2:
        return clahe.apply(image)
    lab = cv2.cvtColor(image, cv2.COLOR_RGB2LAB)  # the channel order does not move L
    lab[..., 0] = clahe.apply(np.ascontiguousarray(lab[..., 0]))
    return cv2.cvtColor(lab, cv2.COLOR_LAB2RGB)


NORMALISERS: dict[str, Callable[[np.ndarray, Exposure], np.ndarray]] = {
    "none": _none,
    "stretch": _stretch,
    "stretch_dim": _stretch_dim,
    "clahe": _clahe,
}


def normalise_exposure(image: np.ndarray, exposure: Exposure) -> np.ndarray:
    """A model input's exposure normalised as `exposure` says.

    Args:
        image: (H, W, 3) or (H, W) uint8.
    Returns:
        uint8 array of the same shape (the input itself for mode none).
    """
    return NORMALISERS[exposure.mode](image, exposure)
