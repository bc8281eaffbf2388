"""spraycv.evaluation.significance: Holm's step-down test over one-sided z statistics."""

from __future__ import annotations

import numpy as np
import pytest
from repo_scripts import load_script

from spraycv.evaluation.significance import first_z, holm, mcnemar_z, one_sided_p

HOLM_CASES = [  # z statistics, alpha, which are significant
    ("one test at 5 %", [1.7], 0.05, [True]),
    ("one test short of 5 %", [1.6], 0.05, [False]),
    ("both pass their step", [3.0, 2.0], 0.05, [True, True]),
    ("step-down: 2.2 at alpha/3, 2.1 at alpha/2, 0 fails", [2.2, 0.0, 2.1], 0.05,
     [True, False, True]),
    ("the strongest fails alpha/m: nothing passes", [2.1, 2.1, 2.1], 0.05,
     [False, False, False]),
    ("z 2.5 among 51 tests is chance", [2.5] + [0.0] * 50, 0.05, [False] * 51),
    ("the other direction never passes", [-5.0, 5.0], 0.05, [False, True]),
    ("no tests", [], 0.05, []),
]  # fmt: skip


@pytest.mark.parametrize(("zs", "alpha", "expected"), [c[1:] for c in HOLM_CASES],
                         ids=[c[0] for c in HOLM_CASES])  # fmt: skip
def test_holm(zs: list[float], alpha: float, expected: list[bool]) -> None:
    assert holm(zs, alpha) == expected


@pytest.mark.parametrize(("z", "p"), [(0.0, 0.5), (1.6448536, 0.05), (-1.6448536, 0.95),
                                      (3.0902323, 0.001)])  # fmt: skip
def test_one_sided_p(z: float, p: float) -> None:
    assert one_sided_p(z) == pytest.approx(p, abs=1e-7)


@pytest.mark.parametrize(("worse", "better", "z"), [
    (20, 2, 18 / 22**0.5), (2, 20, -(18 / 22**0.5)), (5, 5, 0.0), (0, 0, 0.0), (4, 0, 2.0),
])  # fmt: skip
def test_mcnemar_z(worse: int, better: int, z: float) -> None:
    assert mcnemar_z(worse, better) == pytest.approx(z)


@pytest.mark.parametrize(("m", "z"), [(1, 1.6449), (3, 2.1280), (51, 3.0962)])
def test_first_z_is_where_the_strongest_test_passes(m: int, z: float) -> None:
    assert first_z(m, 0.05) == pytest.approx(z, abs=1e-4)
    rest = [0.0] * (m - 1)
    assert holm([first_z(m, 0.05) + 1e-6, *rest], 0.05)[0]
    assert not holm([first_z(m, 0.05) - 1e-6, *rest], 0.05)[0]


def test_the_ship_rule_holds_its_family_wise_rate_where_one_z_beyond_2_did_not() -> None:
    """A candidate that changes nothing, 400 seeded draws of a full judgement's 52 tests:
    the rule refuses or ships about 5 % of them; a single z beyond 2 refused most."""
    null = load_script("ship_rule_null", "benchmarks")
    rule = null.load_rule()
    rng = np.random.default_rng(7)
    counts = [0, 0, 0, 0]
    for _ in range(400):
        z = rng.standard_normal((3, len(rule.PAIRED_SETS)))
        verdicts = null.verdicts(rule, z, float(rng.standard_normal()), rule.PAIRED_SETS)
        counts = [c + v for c, v in zip(counts, verdicts, strict=True)]
    old_refuses, old_ships, refuses, ships = (c / 400 for c in counts)
    assert old_refuses > 0.5 and old_ships > 0.1
    assert refuses < 0.1 and ships < 0.1
