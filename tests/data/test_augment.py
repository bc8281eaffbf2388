from __future__ import annotations

import albumentations as A
import numpy as np
import pytest
from pydantic import ValidationError

from spraycv.config.data import AugmentConfig, DataConfig
from spraycv.data.augment import (
    build_eval_transform,
    build_train_transform,
    photometric_transforms,
)

PROBS = [name for name in AugmentConfig.model_fields if name.endswith("_p")]
GEOMETRIC = ("hflip_p", "vflip_p", "affine_p", "crop_p")


def _cfg(on: tuple[str, ...], size: int = 64, **kw) -> DataConfig:
    probs = {name: (1.0 if name in on else 0.0) for name in PROBS}
    return DataConfig(input_size=size, augment=AugmentConfig(**probs), **kw)


def _scene(h: int = 80, w: int = 100) -> tuple[np.ndarray, np.ndarray]:
    image = np.full((h, w, 3), 20, np.uint8)
    mask = np.zeros((h, w), np.uint8)
    image[15:45, 55:85] = 235  # an off-centre bright square, so flips move it
    mask[15:45, 55:85] = 1
    return image, mask


def test_config_defaults_and_validation() -> None:
    cfg = DataConfig()
    assert cfg.input_size == (256, 256) and cfg.augment.enabled
    assert DataConfig(input_size=128).input_size == (128, 128)
    for bad in (
        {"input_size": 250},
        {"std": (0.2, 0.0, 0.2)},
        {"split_fractions": (0.5, 0.5, 0.5)},
    ):
        with pytest.raises(ValidationError):
            DataConfig(**bad)
    for bad_aug in ({"hflip_p": 1.5}, {"crop_scale": (0.9, 0.5)}, {"flip": True}):
        with pytest.raises(ValidationError):
            AugmentConfig(**bad_aug)


@pytest.mark.parametrize("seed", range(8))
def test_geometric_keeps_image_and_mask_aligned(seed: int) -> None:
    transform = build_train_transform(_cfg(GEOMETRIC), seed=seed)
    image, mask = _scene()
    out = transform(image=image, mask=mask)
    assert out["image"].shape == (64, 64, 3) and out["image"].dtype == np.float32
    assert set(np.unique(out["mask"])) <= {0, 1}  # nearest interpolation: still binary
    bright = out["image"].mean(axis=2) > 0  # normalised: background < 0 < square
    m = out["mask"].astype(bool)
    assert m.sum() > 50
    assert (bright & m).sum() / (bright | m).sum() > 0.85  # edges may differ by a pixel


def test_hflip_mirrors_both() -> None:
    image, mask = _scene()
    out = build_train_transform(_cfg(("hflip_p",)), seed=0)(image=image, mask=mask)
    resize = A.Resize(64, 64, interpolation=0)
    np.testing.assert_array_equal(out["mask"], resize(image=np.fliplr(mask).copy())["image"])
    assert out["mask"][:, :32].sum() > out["mask"][:, 32:].sum()  # the square moved left


def test_photometric_leaves_mask_unchanged() -> None:
    image, mask = _scene()
    photometric = A.Compose(photometric_transforms(_cfg(tuple(PROBS))), seed=3)
    out = photometric(image=image, mask=mask)
    np.testing.assert_array_equal(out["mask"], mask)
    assert out["image"].shape == image.shape and not np.array_equal(out["image"], image)


def test_full_pipeline_output() -> None:
    image, mask = _scene()
    out = build_train_transform(_cfg(tuple(PROBS)), seed=5)(image=image, mask=mask)
    assert out["image"].shape == (64, 64, 3) and out["image"].dtype == np.float32
    assert set(np.unique(out["mask"])) <= {0, 1}


def test_eval_and_disabled_are_deterministic() -> None:
    image, mask = _scene()
    cfg = DataConfig(input_size=(64, 96), augment=AugmentConfig(enabled=False))
    a = build_train_transform(cfg)(image=image, mask=mask)
    b = build_eval_transform(cfg)(image=image, mask=mask)
    np.testing.assert_array_equal(a["image"], b["image"])
    np.testing.assert_array_equal(a["mask"], b["mask"])
    assert b["image"].shape == (64, 96, 3)


def test_keep_aspect_scales_the_shorter_side_and_takes_a_window() -> None:
    """A 16:9 frame at the scale the runtime's keep_aspect reads it: the square stays square
    and 64 / 80 of its size; evaluation takes the centre, training a random window."""
    image, mask = _scene(80, 160)
    cfg = DataConfig(input_size=64, resize_mode="keep_aspect", augment=AugmentConfig(
        hflip_p=0, vflip_p=0, crop_p=0, affine_p=0))  # fmt: skip
    out = build_eval_transform(cfg)(image=image, mask=mask)
    rows = np.flatnonzero(out["mask"].any(axis=1))
    cols = np.flatnonzero(out["mask"].any(axis=0))
    assert out["image"].shape == (64, 64, 3) and len(rows) == len(cols) == 24
    windows = {build_train_transform(cfg, seed=s)(image=image, mask=mask)["mask"].sum()
               for s in range(8)}  # fmt: skip
    assert len(windows) > 1  # the window moves: the square is cut or left out


def test_letterbox_keeps_aspect() -> None:
    image, mask = _scene(80, 160)
    out = build_eval_transform(DataConfig(input_size=64, resize_mode="letterbox"))(
        image=image, mask=mask
    )
    assert out["image"].shape == (64, 64, 3)
    rows = np.flatnonzero(out["mask"].any(axis=1))
    cols = np.flatnonzero(out["mask"].any(axis=0))
    # the 30 x 30 square scales by 64/160 to 12 x 12, still square
    assert len(rows) == len(cols) == 12
