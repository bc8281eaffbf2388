"""Spray segmentation: image -> binary spray mask (the classical baseline lives here)."""

from __future__ import annotations

from spraycv.segment.classical import (
    ImageError,
    detect_polarity,
    segment_classical,
    to_gray,
)

__all__ = ["ImageError", "detect_polarity", "segment_classical", "to_gray"]
