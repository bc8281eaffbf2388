"""Family-wise significance for comparing two pipelines on many held-out sets at once.

A candidate is judged by a paired test per set and measure (scripts/compare_heldout.py): with
about fifty one-sided tests, a single z beyond 2 turns up by chance in most comparisons of two
pipelines that read alike. Holm's step-down procedure holds the chance of any false call in
the whole family at alpha, whatever the dependence between the tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


def one_sided_p(z: float) -> float:
    """P(Z >= z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def holm(zs: Sequence[float], alpha: float) -> list[bool]:
    """Which one-sided tests (z > 0 points the tested way) are significant by Holm's step-down
    procedure: ranked by p-value, the k-th (from 0) passes while every one before it passed
    and its p is at most alpha / (m - k).

    Args:
        zs: (m,) z statistics.
    Returns:
        (m,) whether each test is significant, in the order of `zs`.
    """
    order = sorted(range(len(zs)), key=lambda i: -zs[i])
    out = [False] * len(zs)
    for k, i in enumerate(order):
        if one_sided_p(zs[i]) > alpha / (len(zs) - k):
            break
        out[i] = True
    return out


def first_z(m: int, alpha: float) -> float:
    """The z that the strongest of m tests must reach for Holm's procedure to call any."""
    return NormalDist().inv_cdf(1.0 - alpha / max(m, 1))


def mcnemar_z(worse: int, better: int) -> float:
    """McNemar's statistic (normal approximation) of the discordant pairs of a paired count:
    the cases only the candidate gets wrong (`worse`) against those only the shipped one
    does (`better`); > 0: the candidate is worse, 0 without discordant pairs."""
    n = worse + better
    return (worse - better) / math.sqrt(n) if n else 0.0
