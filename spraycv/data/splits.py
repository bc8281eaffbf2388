"""Deterministic train/val/test splits of samples."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from spraycv.data.sample import DataError, Sample


def _counts(n: int, fractions: Sequence[float]) -> list[int]:
    """Split n into len(fractions) parts by largest remainder; every part with a positive
    fraction gets at least one item when n allows (an empty val set breaks training)."""
    exact = np.asarray(fractions, dtype=np.float64) * n
    counts = np.floor(exact).astype(int)
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[: n - counts.sum()]] += 1
    positive = [i for i, f in enumerate(fractions) if f > 0]
    if n >= len(positive):
        for i in positive:
            if counts[i] == 0:
                counts[int(np.argmax(counts))] -= 1
                counts[i] = 1
    return counts.tolist()


def split_samples(
    samples: Sequence[Sample],
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    seed: int = 0,
    group_of: Callable[[Sample], str] | None = None,
) -> tuple[list[Sample], list[Sample], list[Sample]]:
    """Split into (train, val, test), disjoint and covering all samples.

    Deterministic for a seed and independent of the input order: samples are sorted by
    id before the seeded shuffle. `group_of` keeps samples with the same key (e.g. frames
    of one video or nozzle) in the same split, so near-duplicates do not leak from train
    into val/test; the fractions then count groups.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise DataError(f"fractions must be 3 numbers >= 0 that sum to 1; got {fractions}")
    ordered = sorted(samples, key=lambda s: s.id)
    ids = [s.id for s in ordered]
    if dupes := sorted({i for i, j in itertools.pairwise(ids) if i == j}):
        raise DataError(f"duplicate sample ids, the split would depend on order: {dupes[:5]}")
    groups: dict[str, list[Sample]] = {}
    for sample in ordered:
        groups.setdefault(group_of(sample) if group_of else sample.id, []).append(sample)
    keys = sorted(groups)
    perm = np.random.default_rng(seed).permutation(len(keys))
    parts: tuple[list[Sample], list[Sample], list[Sample]] = ([], [], [])
    start = 0
    for part, count in zip(parts, _counts(len(keys), fractions), strict=True):
        for k in perm[start : start + count]:
            part.extend(groups[keys[k]])
        start += count
    return parts
