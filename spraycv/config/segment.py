"""Defaults of the classical (threshold) segmenter."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from spraycv.config.base import StrictModel


class ClassicalSegmenterConfig(StrictModel):
    """Threshold segmentation: polarity, threshold, then morphology into a spray envelope.

    Kernel sizes given as fractions scale with the image's shorter side, so that a 256 px
    and a 2048 px picture of the same scene give the same envelope.
    """

    polarity: Literal["auto", "bright", "dark"] = Field(
        "auto", description="bright: front-lit spray on dark; dark: back-lit spray on bright"
    )
    method: Literal["otsu", "triangle", "adaptive", "fixed"] = "otsu"
    fixed_threshold: int = Field(128, ge=1, le=254, description="for method 'fixed'")
    min_contrast: float = Field(
        8.0, ge=0.0, description="grey levels between spray and background, else empty mask"
    )
    blur_sigma_px: float = Field(2.0, ge=0.0, description="Gaussian denoising before threshold")
    flatten_frac: float = Field(
        0.0, ge=0.0, le=1.0, description="background median width (share of side), 0 = off"
    )
    drop_bars: bool = Field(True, description="remove straight bars (pipes, rods, stripes)")
    adaptive_block_frac: float = Field(0.25, gt=0.0, le=1.0)
    adaptive_offset: float = Field(5.0, description="grey levels above the local mean")
    close_frac: float = Field(
        0.04, ge=0.0, le=0.2, description="closing kernel: joins droplets into the envelope"
    )
    open_px: int = Field(3, ge=0, le=31, description="opening kernel: removes specks")
    min_area_frac: float = Field(
        0.002, ge=0.0, lt=1.0, description="components smaller than this share are dropped"
    )
    fill_holes: bool = True
