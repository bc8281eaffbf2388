"""Defaults of the training data: input size, normalisation, augmentation and splits."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from spraycv.config.base import StrictModel
from spraycv.io.exposure import Exposure

Probability = Annotated[float, Field(ge=0.0, le=1.0)]
IMAGENET_MEAN = (0.485, 0.456, 0.406)  # RGB, of images scaled to [0, 1]
IMAGENET_STD = (0.229, 0.224, 0.225)


def _ordered(pair: tuple[float, float], name: str) -> tuple[float, float]:
    if pair[0] > pair[1]:
        raise ValueError(f"{name} must be (low, high) with low <= high; got {pair}")
    return pair


class AugmentConfig(StrictModel):
    """Random training augmentations, each applied with its probability `*_p` (0 = off).

    Geometric ones move image and mask together (a horizontal flip swaps the left and
    right edge of a cone, and the mask with it); photometric ones change the image only.
    Vertical flips are off by default: sprays point down in our images.
    """

    enabled: bool = True
    # geometric
    hflip_p: Probability = 0.5
    vflip_p: Probability = 0.0
    affine_p: Probability = 0.5
    affine_scale: tuple[float, float] = (0.9, 1.1)
    affine_translate: float = Field(0.05, ge=0.0, le=0.5, description="fraction of size")
    affine_rotate_deg: float = Field(10.0, ge=0.0, le=180.0)
    crop_p: Probability = 0.25
    crop_scale: tuple[float, float] = (0.6, 1.0)  # area fraction of the random crop
    crop_ratio: tuple[float, float] = (0.85, 1.15)  # near 1: keep cone angles undistorted
    # photometric
    brightness_contrast_p: Probability = 0.5
    brightness_limit: float = Field(0.2, ge=0.0, le=1.0)
    contrast_limit: float = Field(0.2, ge=0.0, le=1.0)
    gamma_p: Probability = 0.3
    gamma_limit: tuple[float, float] = (80.0, 120.0)  # percent
    hue_saturation_p: Probability = 0.2
    noise_p: Probability = 0.3
    noise_std_range: tuple[float, float] = (0.02, 0.08)  # fraction of the max pixel value
    blur_p: Probability = 0.2  # Gaussian or motion blur, one of them
    blur_max_px: int = Field(7, ge=3, le=31, description="largest (odd) blur kernel")
    jpeg_p: Probability = 0.3
    jpeg_quality_range: tuple[int, int] = (50, 95)
    clahe_p: Probability = 0.1
    to_gray_p: Probability = 0.1
    # under-exposure: the image times a factor drawn log-uniformly from the range, kept in 8
    # bits (a dim camera's few grey levels), before the model's exposure normalisation
    underexpose_p: Probability = 0.15
    underexpose_range: tuple[float, float] = (0.08, 0.6)
    # over-exposure: the same with a factor above 1, the highlights clipped at 255 (off by
    # default: the shipped model's recipes predate it; experiments row 94)
    overexpose_p: Probability = 0.0
    overexpose_range: tuple[float, float] = (1.3, 2.5)

    @model_validator(mode="after")
    def _ranges(self) -> AugmentConfig:
        pairs = (
            "affine_scale",
            "crop_scale",
            "crop_ratio",
            "gamma_limit",
            "noise_std_range",
            "underexpose_range",
            "overexpose_range",
        )
        for name in (*pairs, "jpeg_quality_range"):
            _ordered(getattr(self, name), name)
        if self.affine_scale[0] <= 0 or not 0 < self.crop_scale[0] <= self.crop_scale[1] <= 1:
            raise ValueError("affine_scale must be > 0 and crop_scale within (0, 1]")
        if not 0 < self.underexpose_range[0] <= self.underexpose_range[1] <= 1:
            raise ValueError(f"underexpose_range must lie in (0, 1]; got {self.underexpose_range}")
        if self.overexpose_range[0] < 1:
            raise ValueError(f"overexpose_range must be >= 1; got {self.overexpose_range}")
        if self.crop_ratio[0] <= 0 or self.gamma_limit[0] <= 0:
            raise ValueError("crop_ratio and gamma_limit must be > 0")
        if not 0 <= self.noise_std_range[0] <= self.noise_std_range[1] <= 1:
            raise ValueError("noise_std_range must lie within [0, 1]")
        if not 1 <= self.jpeg_quality_range[0] <= self.jpeg_quality_range[1] <= 100:
            raise ValueError("jpeg_quality_range must lie within [1, 100]")
        return self


class DataConfig(StrictModel):
    """How samples become model inputs.

    `input_size` is (H, W), or one number for a square; both must be multiples of 32 (the
    encoders downsample 5 times). "stretch" resizes to it, distorting the aspect ratio and
    so the cone angles in the model's output until it is resized back; "letterbox" scales
    the longer side to fit and pads with zeros, keeping angles; "keep_aspect" scales the
    shorter side to the input's and takes a window of `input_size` (random in training,
    central in evaluation): frames of another shape seen at the scale the runtime's
    keep_aspect runs them at (fine-tuning on a 16:9 camera's frames).
    """

    input_size: tuple[int, int] = (256, 256)
    resize_mode: Literal["stretch", "letterbox", "keep_aspect"] = "stretch"
    mean: tuple[float, float, float] = IMAGENET_MEAN  # RGB, on [0, 1] pixel values
    std: tuple[float, float, float] = IMAGENET_STD
    # resample masks with area/linear interpolation and keep the fractional edge coverage as
    # soft targets: sub-pixel boundary positions survive the downscale to the input size,
    # which is what the cone-angle fit needs; False: nearest-neighbour binary masks
    soft_masks: bool = True
    # exposure normalisation of every input, after the resize (spraycv.io.exposure; stored
    # in the model's sidecar and applied the same way at inference)
    exposure: Exposure = Field(default_factory=Exposure)
    split_fractions: tuple[float, float, float] = (0.8, 0.1, 0.1)  # train, val, test
    split_seed: int = 0
    augment: AugmentConfig = Field(default_factory=AugmentConfig)

    @field_validator("input_size", mode="before")
    @classmethod
    def _square(cls, value: object) -> object:
        return (value, value) if isinstance(value, int) else value

    @model_validator(mode="after")
    def _check(self) -> DataConfig:
        if any(v <= 0 or v % 32 for v in self.input_size):
            raise ValueError(f"input_size must be positive multiples of 32; got {self.input_size}")
        if any(s <= 0 for s in self.std):
            raise ValueError(f"std must be > 0; got {self.std}")
        if any(f < 0 for f in self.split_fractions) or abs(sum(self.split_fractions) - 1) > 1e-6:
            raise ValueError(
                f"split_fractions must be >= 0 and sum to 1; got {self.split_fractions}"
            )
        return self
