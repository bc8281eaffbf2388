"""How often the ship rule (scripts/compare_heldout.py) refuses, and ships, a candidate that
changes nothing: every paired test's z drawn from N(0, 1), as many tests as a full judgement
has (the included angle, its halves and the nozzles found on each of the 17 paired sets, and
the confidently wrong readings over all of them), the included angle's and the halves' z on
one set correlated by rho. The verdict is the script's own `verdict`, with every bound held
by both pipelines; the rule before row 199 (a single z beyond 2 counts) is shown beside it.

Usage: python benchmarks/ship_rule_null.py [--draws 20000] [--rho 0 0.5 0.9]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compare_heldout.py"
HELD = {  # figures that hold every bound of the rule
    "angle_mae_deg": 1.0, "angle_median_deg": 0.5, "angle_p95_deg": 1.0, "iou": 1.0,
    "frames_with_missed_frac": 0.0, "frames_with_extra_frac": 0.0,
}  # fmt: skip


def load_rule():
    """scripts/compare_heldout.py as a module."""
    spec = importlib.util.spec_from_file_location("compare_heldout", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_heldout"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class CountTest:
    """A test of counts (nozzles found, confidently wrong readings) of a given z (the rule
    reads its z, and its counts for a reason)."""

    z: float
    gained: int = 0
    lost: int = 0
    new: int = 0
    fixed: int = 0


def verdicts(
    rule, z: np.ndarray, wrong_z: float, sets: tuple[str, ...]
) -> tuple[bool, bool, bool, bool]:
    """(old rule refuses, old rule ships, rule refuses, rule ships) for z (3, S): the included
    angle's, the halves' and the nozzle tests' z per set, and wrong_z of the confidently
    wrong readings (> 0: the candidate is worse; the old rule had no such test)."""
    old_worse, old_better = bool((z > 2).any()), bool((z < -2).any())
    paired, halves = ({s: rule.PairedChange(float(v), 1.0, 900) for s, v in zip(sets, row,
                       strict=True)} for row in z[:2])  # fmt: skip
    found = {s: CountTest(float(v)) for s, v in zip(sets, z[2], strict=True)}
    figures = {s: dict(HELD) for s in rule.SETS}
    ok, reasons = rule.verdict(figures, figures, paired, found, halves, CountTest(wrong_z))
    refused = any(not r.startswith("better on no") for r in reasons)
    return old_worse, not old_worse and old_better, refused, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20000)
    ap.add_argument("--rho", type=float, nargs="+", default=[0.0, 0.5, 0.9])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rule = load_rule()
    sets = rule.PAIRED_SETS
    rng = np.random.default_rng(args.seed)
    print(f"{len(sets)} sets x 3 tests + 1, {args.draws} draws of a candidate that changes nothing")
    print("| rho | z > 2 rule: refuses | ships | Holm (the rule): refuses | ships |")
    print("|---|---|---|---|---|")
    for rho in args.rho:
        counts = np.zeros(4)
        for _ in range(args.draws):
            z = rng.standard_normal((3, len(sets)))
            z[1] = rho * z[0] + math.sqrt(1.0 - rho * rho) * z[1]
            counts += verdicts(rule, z, float(rng.standard_normal()), sets)
        print(f"| {rho:g} | " + " | ".join(f"{v / args.draws:.1%}" for v in counts) + " |")


if __name__ == "__main__":
    main()
