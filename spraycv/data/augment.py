"""Albumentations pipelines built from `DataConfig`: random training ones and the eval one.

Images enter as (H, W, 3) uint8 RGB (`SprayDataset` converts from BGR first; the colour
transforms assume RGB) with (H, W) uint8 {0, 1} masks. Geometric transforms move both,
masks always with nearest-neighbour interpolation so they stay binary; photometric ones
touch the image only. Both pipelines end with the resize to `input_size` and `Normalize`,
so they return (H', W', 3) float32 normalised images. With `soft_masks` the dataset passes
float32 masks and they are resampled like images (area/linear), so edge pixels keep their
fractional coverage.
"""

from __future__ import annotations

import math
from typing import Any

import albumentations as A
import cv2
import numpy as np

from spraycv.config.data import AugmentConfig, DataConfig
from spraycv.io.exposure import Exposure, normalise_exposure

NEAREST = cv2.INTER_NEAREST
AREA = cv2.INTER_AREA  # the downscale the runtime uses too (spraycv.runtime.processing)


def _mask_interp(cfg: DataConfig, downscale: bool = False) -> int:
    if not cfg.soft_masks:
        return NEAREST
    return AREA if downscale else cv2.INTER_LINEAR


def _stretch(cfg: DataConfig, random: bool) -> list[A.BasicTransform]:
    h, w = cfg.input_size
    return [A.Resize(h, w, interpolation=AREA, mask_interpolation=_mask_interp(cfg, True))]


def _letterbox(cfg: DataConfig, random: bool) -> list[A.BasicTransform]:
    h, w = cfg.input_size
    return [
        A.LongestMaxSize(
            max_size_hw=(h, w), interpolation=AREA, mask_interpolation=_mask_interp(cfg, True)
        ),
        A.PadIfNeeded(
            min_height=h, min_width=w, border_mode=cv2.BORDER_CONSTANT, fill=0, fill_mask=0
        ),
    ]


def _keep_aspect(cfg: DataConfig, random: bool) -> list[A.BasicTransform]:
    h, w = cfg.input_size
    crop = A.RandomCrop if random else A.CenterCrop
    return [
        A.SmallestMaxSize(
            max_size=min(h, w), interpolation=AREA, mask_interpolation=_mask_interp(cfg, True)
        ),
        crop(h, w, pad_if_needed=True, border_mode=cv2.BORDER_CONSTANT, fill=0, fill_mask=0),
    ]


RESIZES = {"stretch": _stretch, "letterbox": _letterbox, "keep_aspect": _keep_aspect}


def _resize(cfg: DataConfig, random: bool = False) -> list[A.BasicTransform]:
    """The steps to `input_size` by `cfg.resize_mode` (random: a training window)."""
    return RESIZES[cfg.resize_mode](cfg, random)


class CameraGain(A.ImageOnlyTransform):
    """A camera's gain set wrong: the uint8 image times a factor drawn log-uniformly from
    `factor_range`, clipped and rounded back to 8 bits. Below 1, a dim camera's few grey
    levels; above 1, the highlights clipped at 255 (a blown-out panel or spray core)."""

    def __init__(self, factor_range: tuple[float, float] = (0.08, 0.6), p: float = 0.5):
        super().__init__(p=p)
        self.factor_range = factor_range

    def get_params(self) -> dict[str, Any]:
        lo, hi = (math.log(v) for v in self.factor_range)
        return {"factor": math.exp(self.py_random.uniform(lo, hi))}

    def apply(self, img: np.ndarray, factor: float = 1.0, **params: Any) -> np.ndarray:
        return np.clip(img.astype(np.float32) * factor + 0.5, 0, 255).astype(np.uint8)


class NormaliseExposure(A.ImageOnlyTransform):
    """The model's exposure normalisation (spraycv.io.exposure), always applied: the same
    step the runtime takes after its resize."""

    def __init__(self, exposure: Exposure):
        super().__init__(p=1.0)
        self.exposure = exposure

    def apply(self, img: np.ndarray, **params: Any) -> np.ndarray:
        return normalise_exposure(img, self.exposure)


def _normalize(cfg: DataConfig) -> list[A.BasicTransform]:
    """The exposure normalisation (none by default), then mean and std."""
    exposure = [] if cfg.exposure.mode == "none" else [NormaliseExposure(cfg.exposure)]
    return [*exposure, A.Normalize(mean=cfg.mean, std=cfg.std, max_pixel_value=255.0)]


def geometric_transforms(cfg: DataConfig) -> list[A.BasicTransform]:
    """Random geometry (image and mask together), ending at `input_size`."""
    a: AugmentConfig = cfg.augment
    h, w = cfg.input_size
    return [
        A.HorizontalFlip(p=a.hflip_p),
        A.VerticalFlip(p=a.vflip_p),
        A.RandomResizedCrop(
            size=(h, w),
            scale=a.crop_scale,
            ratio=a.crop_ratio,
            interpolation=AREA,
            mask_interpolation=_mask_interp(cfg, True),
            p=a.crop_p,
        ),
        *_resize(cfg, random=True),  # no-op after a crop; the affine then runs small
        A.Affine(
            scale=a.affine_scale,
            translate_percent=(-a.affine_translate, a.affine_translate),
            rotate=(-a.affine_rotate_deg, a.affine_rotate_deg),
            mask_interpolation=_mask_interp(cfg),
            border_mode=cv2.BORDER_CONSTANT,  # zero corners, as in the padded letterbox
            fill=0,
            fill_mask=0,
            p=a.affine_p,
        ),
    ]


def photometric_transforms(cfg: DataConfig) -> list[A.BasicTransform]:
    """Random appearance changes of the image only (masks pass through untouched)."""
    a = cfg.augment
    blur = a.blur_max_px if a.blur_max_px % 2 else a.blur_max_px - 1
    return [
        A.RandomBrightnessContrast(
            brightness_limit=a.brightness_limit,
            contrast_limit=a.contrast_limit,
            p=a.brightness_contrast_p,
        ),
        A.RandomGamma(gamma_limit=a.gamma_limit, p=a.gamma_p),
        A.HueSaturationValue(p=a.hue_saturation_p),
        A.CLAHE(p=a.clahe_p),
        A.ToGray(num_output_channels=3, p=a.to_gray_p),
        A.OneOf(
            [A.GaussianBlur(blur_limit=(3, blur)), A.MotionBlur(blur_limit=(3, blur))],
            p=a.blur_p,
        ),
        A.GaussNoise(std_range=a.noise_std_range, p=a.noise_p),
        A.ImageCompression(quality_range=a.jpeg_quality_range, p=a.jpeg_p),
        CameraGain(a.underexpose_range, p=a.underexpose_p),
        CameraGain(a.overexpose_range, p=a.overexpose_p),
    ]


def build_train_transform(cfg: DataConfig, seed: int | None = None) -> A.Compose:
    """Random geometry + appearance, resize and normalise; eval transform if disabled.

    `seed` makes the random sequence reproducible (None: a fresh one each run).
    """
    if not cfg.augment.enabled:
        return build_eval_transform(cfg)
    steps = [*geometric_transforms(cfg), *photometric_transforms(cfg), *_normalize(cfg)]
    return A.Compose(steps, seed=seed)


def build_eval_transform(cfg: DataConfig) -> A.Compose:
    """Resize to `input_size` and normalise; nothing random."""
    return A.Compose([*_resize(cfg), *_normalize(cfg)])
