"""The data side of a training run: samples, splits, datasets and the per-epoch step count."""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from spraycv.config.train import TrainConfig
from spraycv.data.dataset import SprayDataset
from spraycv.data.formats import load_samples
from spraycv.data.sample import DataError, Sample
from spraycv.data.splits import split_samples


@dataclass(frozen=True)
class Splits:
    train: list[Sample]
    val: list[Sample]


def training_samples(cfg: TrainConfig) -> list[Sample]:
    """The samples of every folder of `train_data`, read as one set: with several folders
    each id is qualified by its folder (rendered sets all number their frames from 000000,
    and the split needs ids unique)."""
    if len(cfg.train_data) == 1:
        return load_samples(cfg.train_data[0])
    return [replace(s, id=f"{folder}/{s.id}") for folder in cfg.train_data
            for s in load_samples(folder)]  # fmt: skip


def make_splits(cfg: TrainConfig) -> Splits:
    """Training and validation samples: a separate val folder, or a seeded split of the
    training folders' samples (every folder of `train_data`, read as one set)."""
    samples = training_samples(cfg)
    if cfg.val_data is not None:
        return Splits(samples, load_samples(cfg.val_data))
    train, val, _ = split_samples(samples, cfg.data.split_fractions, seed=cfg.data.split_seed)
    if not val:
        folders = ", ".join(map(str, cfg.train_data))
        raise DataError(f"{folders}: too few samples ({len(samples)}) to split off validation")
    return Splits(train, val)


def make_datasets(cfg: TrainConfig, splits: Splits) -> tuple[SprayDataset, SprayDataset]:
    """The augmented training set (each item marked taught or not where the run leaves
    styles untaught) and the plain validation set."""
    taught = None
    if cfg.untaught_styles:
        styles = rendered_styles(cfg.train_data)
        untaught = set(cfg.untaught_styles)
        taught = [styles.get(s.image_path.resolve()) not in untaught for s in splits.train]
    train = SprayDataset.from_config(splits.train, cfg.data, train=True, seed=cfg.seed,
                                     taught=taught)  # fmt: skip
    val = SprayDataset.from_config(splits.val, cfg.data, train=False)
    return train, val


def rendered_styles(folders: list[Path]) -> dict[Path, str | None]:
    """The render style of each image of rendered sets (their labels.jsonl; None: the
    standard look), by the image's resolved path; folders without labels give none."""
    styles: dict[Path, str | None] = {}
    for folder in map(Path, folders):
        labels = folder / "labels.jsonl"
        if not labels.is_file():
            continue
        for record in map(json.loads, filter(None, labels.read_text().splitlines())):
            styles[(folder / record["image"]).resolve()] = record.get("style")
    return styles


def steps_per_epoch(cfg: TrainConfig, loader_len: int) -> int:
    """Optimiser steps per epoch: the whole loader, or fewer when max_train_images caps it."""
    if cfg.max_train_images is None:
        return loader_len
    world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    return max(1, min(loader_len, math.ceil(cfg.max_train_images / (cfg.batch_size * world))))


def seed_worker(worker_id: int) -> None:
    """Give each DataLoader worker its own, reproducible NumPy and Python seeds."""
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)  # noqa: NPY002 (seeds the legacy global RNG that libraries use)
    random.seed(seed)
