"""The data side of fine-tuning: held-out split, rendered/user mix, step budget."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np

from spraycv.config.finetune import FinetuneConfig
from spraycv.data.formats import load_samples
from spraycv.data.sample import DataError, Sample
from spraycv.data.splits import split_samples

SYNTHETIC_PREFIX = "synthetic/"  # rendered samples' ids: never mistaken for the user's


def split_holdout(
    samples: Sequence[Sample], fraction: float, seed: int = 0
) -> tuple[list[Sample], list[Sample]]:
    """(train, held-out): a seeded, order-independent split with at least one of each."""
    if len(samples) < 2:
        raise DataError(
            f"need at least 2 labelled images to hold some out for the before/after "
            f"comparison; got {len(samples)} (or pass a separate held-out set)"
        )
    train, _, held = split_samples(samples, (1.0 - fraction, 0.0, fraction), seed=seed)
    return train, held


def synthetic_count(n_user: int, ratio: float) -> int:
    """Rendered images to add to `n_user` user images so that they are `ratio` of all."""
    if not 0 <= ratio < 1:
        raise ValueError(f"mix ratio must lie in [0, 1); got {ratio}")
    return round(n_user * ratio / (1.0 - ratio))


def mix_samples(
    user: Sequence[Sample], synthetic: Sequence[Sample], ratio: float, seed: int = 0
) -> list[Sample]:
    """The user's samples plus a seeded draw of rendered ones, `ratio` of the result.

    When fewer rendered samples exist than the ratio asks for, all of them are used (the
    effective ratio is then lower); rendered ids get the prefix "synthetic/".
    """
    want = min(synthetic_count(len(user), ratio), len(synthetic))
    ordered = sorted(synthetic, key=lambda s: s.id)  # independent of the loader's order
    picks = np.random.default_rng(seed).permutation(len(ordered))[:want]
    drawn = [dataclasses.replace(ordered[i], id=SYNTHETIC_PREFIX + ordered[i].id) for i in picks]
    return [*user, *sorted(drawn, key=lambda s: s.id)]


def step_budget(n_train: int, batch_size: int, epochs: int, steps: int | None) -> tuple[int, int]:
    """(epochs, steps per epoch) for the training loop; `steps`, when given, wins.

    Mirrors the loop's loader: it drops the last partial batch when there is a full one.
    """
    per_epoch = n_train // batch_size if n_train >= batch_size else 1
    if steps is None:
        return epochs, per_epoch
    epochs = math.ceil(steps / per_epoch)
    return epochs, math.ceil(steps / epochs)  # spread evenly: epochs * that >= steps


@contextmanager
def synthetic_samples(
    cfg: FinetuneConfig, n_user: int, progress: bool = True
) -> Iterator[tuple[list[Sample], str]]:
    """Rendered samples to mix in, and a description of where they came from.

    From `cfg.synthetic` when set; otherwise `cfg.render_max` at most are rendered into a
    temporary folder that lives as long as the context (the loader reads them lazily).
    """
    want = synthetic_count(n_user, cfg.mix_ratio)
    if cfg.synthetic is not None:
        if not Path(cfg.synthetic).exists():
            raise DataError(f"synthetic data not found: {cfg.synthetic}")
        yield load_samples(cfg.synthetic), str(cfg.synthetic)
        return
    count = min(want, cfg.render_max)
    if count == 0:
        yield [], "none"
        return
    from spraycv.data.synth import write_dataset  # the renderer only when needed

    with TemporaryDirectory(prefix="spraycv-finetune-") as tmp:
        write_dataset(
            Path(tmp) / "synthetic",
            count,
            size=cfg.render_size,
            seed=cfg.render_seed,
            workers=1,
            config=cfg.render,
            progress=progress,
        )
        where = f"rendered on the fly: {count} at {cfg.render_size} px, seed {cfg.render_seed}"
        yield load_samples(Path(tmp) / "synthetic", "folder"), where
