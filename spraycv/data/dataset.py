"""`SprayDataset`: samples -> (image, mask) tensors for segmentation training."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset

from spraycv.config.data import IMAGENET_MEAN, IMAGENET_STD, DataConfig
from spraycv.data.augment import build_eval_transform, build_train_transform
from spraycv.data.sample import Sample

# albumentations-style: transform(image=..., mask=...) -> {"image": ..., "mask": ...}
Transform = Callable[..., dict]


class SprayDataset(Dataset):
    """Images and binary spray masks as float32 tensors.

    Images are stored BGR (OpenCV); they are converted to RGB here, once, before the
    transform, since the colour transforms, `mean`/`std` and pretrained encoders all assume
    RGB. The transform (e.g. `build_train_transform`) resizes to the model input size and
    normalises; if it leaves the image uint8 (no `Normalize` in it, or no transform at
    all), the dataset normalises with `mean`/`std` itself, so an image is never normalised
    twice or not at all.

    Items:
        (image (3, H, W) float32, mask (1, H, W) float32 in {0, 1}, or in [0, 1] with
        `soft_masks`, where edge pixels hold their coverage), plus the sample id
        as a third element when `return_id` is true, or with `taught` (one bool per sample:
        whether a teacher's terms count on it) that sample's mark as a () bool tensor.
    """

    def __init__(
        self,
        samples: Sequence[Sample],
        transform: Transform | None = None,
        *,
        mean: Sequence[float] = IMAGENET_MEAN,
        std: Sequence[float] = IMAGENET_STD,
        return_id: bool = False,
        soft_masks: bool = False,
        taught: Sequence[bool] | None = None,
    ) -> None:
        if taught is not None and (return_id or len(taught) != len(samples)):
            raise ValueError("taught marks every sample once, and not beside return_id")
        self.samples = list(samples)
        self.taught = None if taught is None else list(taught)
        self.soft_masks = soft_masks
        self.transform = transform
        self.mean = np.asarray(mean, dtype=np.float32) * 255.0
        self.std = np.asarray(std, dtype=np.float32) * 255.0
        self.return_id = return_id

    @classmethod
    def from_config(
        cls,
        samples: Sequence[Sample],
        cfg: DataConfig,
        *,
        train: bool,
        return_id: bool = False,
        seed: int | None = None,
        taught: Sequence[bool] | None = None,
    ) -> SprayDataset:
        """Dataset with the training (random) or eval transform of `cfg`."""
        transform = build_train_transform(cfg, seed) if train else build_eval_transform(cfg)
        return cls(
            samples,
            transform,
            mean=cfg.mean,
            std=cfg.std,
            return_id=return_id,
            soft_masks=cfg.soft_masks,
            taught=taught,
        )

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(
        self, index: int
    ) -> (
        tuple[torch.Tensor, torch.Tensor]
        | tuple[torch.Tensor, torch.Tensor, str]
        | tuple[torch.Tensor, torch.Tensor, torch.Tensor]
    ):
        sample = self.samples[index]
        image, mask = sample.load()
        image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
        if self.soft_masks:  # float masks are resampled like images: soft edges survive
            mask = mask.astype(np.float32)
        if self.transform is not None:
            out = self.transform(image=image, mask=mask)
            image, mask = out["image"], out["mask"]
        if image.dtype == np.uint8:
            image = (image.astype(np.float32) - self.mean) / self.std
        image_t = torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1), np.float32))
        mask = np.clip(mask, 0.0, 1.0) if self.soft_masks else (mask > 0)
        mask_t = torch.from_numpy(np.ascontiguousarray(mask[None], np.float32))
        if self.taught is not None:
            return image_t, mask_t, torch.tensor(self.taught[index])
        return (image_t, mask_t, sample.id) if self.return_id else (image_t, mask_t)
