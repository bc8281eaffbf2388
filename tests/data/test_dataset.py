from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from spraycv.config.data import IMAGENET_MEAN, IMAGENET_STD, DataConfig
from spraycv.data.augment import build_eval_transform
from spraycv.data.dataset import SprayDataset
from spraycv.data.formats import load_samples
from spraycv.data.sample import DataError


def _dataset_dir(tmp_path: Path, h: int = 64, w: int = 64) -> Path:
    (tmp_path / "images").mkdir()
    (tmp_path / "masks").mkdir()
    for name in ("a", "b"):
        image = np.zeros((h, w, 3), np.uint8)
        image[10:30, 20:40] = (0, 0, 255)  # pure red, in BGR order
        mask = np.zeros((h, w), np.uint8)
        mask[10:30, 20:40] = 255
        cv2.imwrite(str(tmp_path / "images" / f"{name}.png"), image)
        cv2.imwrite(str(tmp_path / "masks" / f"{name}.png"), mask)
    return tmp_path


def test_items_are_normalised_rgb_tensors(tmp_path: Path) -> None:
    ds = SprayDataset(load_samples(_dataset_dir(tmp_path, 40, 60)))
    image, mask = ds[0]
    assert image.shape == (3, 40, 60) and image.dtype == torch.float32
    assert mask.shape == (1, 40, 60) and mask.dtype == torch.float32
    assert set(mask.unique().tolist()) == {0.0, 1.0}
    red = [
        (v - m) / s for v, m, s in zip((1.0, 0.0, 0.0), IMAGENET_MEAN, IMAGENET_STD, strict=True)
    ]
    assert image[:, 15, 25].tolist() == pytest.approx(red, abs=1e-5)  # channel 0 is R


def test_transform_resizes_and_normalises_once(tmp_path: Path) -> None:
    samples = load_samples(_dataset_dir(tmp_path))
    plain = SprayDataset(samples)[0][0]
    same = SprayDataset(samples, build_eval_transform(DataConfig(input_size=64)))[0][0]
    torch.testing.assert_close(same, plain, atol=1e-5, rtol=0)  # not normalised twice
    ds = SprayDataset.from_config(samples, DataConfig(input_size=(32, 96)), train=True, seed=0)
    image, mask = ds[1]
    assert image.shape == (3, 32, 96) and mask.shape == (1, 32, 96)
    assert set(mask.unique().tolist()) <= {0.0, 1.0}


def test_ids_and_batches(tmp_path: Path) -> None:
    samples = load_samples(_dataset_dir(tmp_path))
    ds = SprayDataset.from_config(samples, DataConfig(input_size=32), train=False, return_id=True)
    images, masks, ids = next(iter(DataLoader(ds, batch_size=2)))
    assert images.shape == (2, 3, 32, 32) and masks.shape == (2, 1, 32, 32)
    assert list(ids) == ["a", "b"]


def test_broken_sample_raises(tmp_path: Path) -> None:
    root = _dataset_dir(tmp_path)
    (root / "masks" / "b.png").unlink()
    ds = SprayDataset(load_samples(root))
    ds[0]
    with pytest.raises(DataError, match="mask missing"):
        ds[1]


@pytest.mark.parametrize(("soft", "fractional"), [(True, True), (False, False)])
def test_soft_masks_keep_edge_coverage_when_downscaled(
    tmp_path: Path, soft: bool, fractional: bool
) -> None:
    root = tmp_path / "soft"
    (root / "images").mkdir(parents=True)
    (root / "masks").mkdir()
    mask = np.zeros((64, 64), np.uint8)
    mask[:, :33] = 255  # the edge falls inside a pixel once halved to 32 px
    cv2.imwrite(str(root / "images" / "a.png"), np.zeros((64, 64, 3), np.uint8))
    cv2.imwrite(str(root / "masks" / "a.png"), mask)
    cfg = DataConfig(input_size=32, soft_masks=soft)
    _, target = SprayDataset.from_config(load_samples(root), cfg, train=False)[0]
    values = set(np.unique(target.numpy()).tolist())
    assert (values - {0.0, 1.0} != set()) is fractional
    if soft:  # coverage is preserved: 33 of 64 columns
        assert float(target.mean()) == pytest.approx(33 / 64, abs=1e-6)
