"""Load every sample of a data set and collect all of its problems."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from spraycv.data.sample import Sample


@dataclass(frozen=True)
class Problem:
    """Something wrong with one sample (or with the set, when `sample_id` is empty)."""

    sample_id: str
    message: str

    def __str__(self) -> str:
        return f"{self.sample_id}: {self.message}" if self.sample_id else self.message


def check_samples(samples: Iterable[Sample]) -> list[Problem]:
    """Load every sample; return all problems found, in sample order (empty: all good).

    Any exception while loading is a problem of that sample (`DataError` and other
    `ValueError`s by their message, anything else also by its type); checking goes on with
    the next one. Duplicate ids are problems too, since
    splits and reports identify samples by id.
    """
    samples = list(samples)
    problems = []
    counts = Counter(s.id for s in samples)
    for sample_id, n in counts.items():
        if n > 1:
            problems.append(Problem(sample_id, f"id used by {n} samples"))
    for sample in samples:
        try:
            sample.load()
        except ValueError as exc:
            problems.append(Problem(sample.id, str(exc)))
        except Exception as exc:  # a checker reports and carries on
            problems.append(Problem(sample.id, f"unexpected {type(exc).__name__}: {exc}"))
    return problems
