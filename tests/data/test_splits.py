from __future__ import annotations

from pathlib import Path

import pytest

from spraycv.data.sample import DataError, Sample
from spraycv.data.splits import split_samples


def _samples(n: int) -> list[Sample]:
    return [Sample(id=f"s{i:03d}", image_path=Path(f"s{i:03d}.jpg")) for i in range(n)]


def _ids(parts: tuple[list[Sample], ...]) -> tuple[list[str], ...]:
    return tuple([s.id for s in part] for part in parts)


def test_disjoint_covering_and_sized() -> None:
    train, val, test = _ids(split_samples(_samples(100), seed=1))
    assert (len(train), len(val), len(test)) == (80, 10, 10)
    assert len(set(train) | set(val) | set(test)) == 100


def test_deterministic_and_order_independent() -> None:
    samples = _samples(50)
    first = _ids(split_samples(samples, (0.6, 0.2, 0.2), seed=7))
    assert _ids(split_samples(samples[::-1], (0.6, 0.2, 0.2), seed=7)) == first
    assert _ids(split_samples(samples, (0.6, 0.2, 0.2), seed=8)) != first


def test_small_sets_still_get_val_and_test() -> None:
    train, val, test = split_samples(_samples(5))
    assert (len(train), len(val), len(test)) == (3, 1, 1)
    assert [len(p) for p in split_samples(_samples(5), (1.0, 0.0, 0.0))] == [5, 0, 0]


def test_groups_stay_together() -> None:
    samples = _samples(60)
    parts = split_samples(samples, seed=3, group_of=lambda s: s.id[:3])  # 6 groups of 10
    for part in parts:
        for group in {s.id[:3] for s in part}:
            assert sum(s.id[:3] == group for s in part) == 10
    assert sum(map(len, parts)) == 60


@pytest.mark.parametrize(
    ("samples", "fractions", "message"),
    [
        (_samples(3), (0.5, 0.5, 0.5), "sum to 1"),
        (_samples(2) + _samples(1), (0.8, 0.1, 0.1), "duplicate sample ids"),
    ],
)
def test_errors(samples: list[Sample], fractions: tuple, message: str) -> None:
    with pytest.raises(DataError, match=message):
        split_samples(samples, fractions)
