"""Two pipelines' held-out figures side by side, and whether the candidate may ship.

Reads runs/eval/NAME_SET/metrics.json, as `bash scripts/eval_heldout.sh NAME ...` writes them,
for the shipped pipeline's NAME and a candidate's. Prints one row per figure, the candidate's
change, and each acceptance bound of issues 13 and 15 that it holds or breaks. A candidate
may ship only when it breaks no bound that the shipped pipeline holds, and its held-out angle
error is lower (rows 35, 41 and 42 of docs/experiments.md were better on the angle and broke
the hard set's false-plume bound).

Usage:
    python scripts/compare_heldout.py S3f S6A [--runs runs/eval]
Exit status: 0 when the candidate may ship, 1 when it may not, 2 when figures are missing.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

Figures = dict[str, dict[str, float]]  # set -> metrics.json

SETS = (  # those of scripts/eval_heldout.sh
    "heldout", "heldout_unseen", "heldout_hard", "heldout_nospray", "heldout_dim",
    "heldout_dim_twins",
)  # fmt: skip
SHOWN = [  # set, figure: the rows printed
    ("heldout", "angle_mae_deg"), ("heldout", "angle_median_deg"), ("heldout", "angle_p95_deg"),
    ("heldout", "iou"), ("heldout", "frames_with_missed_frac"),
    ("heldout", "frames_with_extra_frac"), ("heldout_unseen", "angle_mae_deg"),
    ("heldout_hard", "angle_mae_deg"), ("heldout_hard", "frames_with_missed_frac"),
    ("heldout_hard", "frames_with_extra_frac"), ("heldout_nospray", "frames_with_extra_frac"),
    ("heldout_dim", "angle_mae_deg"), ("heldout_dim_twins", "angle_mae_deg"),
]  # fmt: skip


def _get(set_name: str, key: str) -> Callable[[Figures], float]:
    return lambda f: f[set_name][key]


def _ratio(a: str, b: str) -> Callable[[Figures], float]:
    return lambda f: f[a]["angle_mae_deg"] / f[b]["angle_mae_deg"]


BOUNDS = [  # issue, what, value of the figures, the bound it must not exceed (or reach)
    ("13", "heldout MAE <= 1.5", _get("heldout", "angle_mae_deg"), 1.5),
    ("13", "heldout median <= 0.8", _get("heldout", "angle_median_deg"), 0.8),
    ("13", "heldout p95 <= 4", _get("heldout", "angle_p95_deg"), 4.0),
    ("13", "heldout IoU >= 0.94", lambda f: -f["heldout"]["iou"], -0.94),
    ("13", "heldout missed <= 2 %", _get("heldout", "frames_with_missed_frac"), 0.02),
    ("13", "heldout extra <= 2 %", _get("heldout", "frames_with_extra_frac"), 0.02),
    ("13", "unseen MAE <= 2", _get("heldout_unseen", "angle_mae_deg"), 2.0),
    ("15", "hard false plumes <= 1 %", _get("heldout_hard", "frames_with_extra_frac"), 0.01),
    ("15", "hard missed <= 2 %", _get("heldout_hard", "frames_with_missed_frac"), 0.02),
    ("15", "hard MAE <= 1.2 x heldout", _ratio("heldout_hard", "heldout"), 1.2),
    ("15", "dim MAE <= 1.5 x twins", _ratio("heldout_dim", "heldout_dim_twins"), 1.5),
    ("15", "no spray: plume on <= 1 %", _get("heldout_nospray", "frames_with_extra_frac"), 0.01),
]
TOLERANCE = 1e-9  # a bound met exactly is met


def read_figures(runs: Path, name: str) -> Figures:
    """Each set's metrics.json of run NAME; a missing one raises FileNotFoundError naming it."""
    return {s: json.loads((runs / f"{name}_{s}" / "metrics.json").read_text()) for s in SETS}


def held(figures: Figures) -> dict[str, bool]:
    """Which acceptance bounds the figures hold (NaN holds none)."""
    out = {}
    for _, what, value, bound in BOUNDS:
        v = value(figures)
        out[what] = math.isfinite(v) and v <= bound + TOLERANCE
    return out


def verdict(shipped: Figures, candidate: Figures) -> tuple[bool, list[str]]:
    """Whether the candidate may ship, and why not: each bound it breaks that the shipped
    pipeline holds, and a held-out angle error that is not lower."""
    before, after = held(shipped), held(candidate)
    reasons = [f"breaks {what}" for what in before if before[what] and not after[what]]
    mae = (shipped["heldout"]["angle_mae_deg"], candidate["heldout"]["angle_mae_deg"])
    if not mae[1] < mae[0]:
        reasons.append(f"heldout MAE not lower ({mae[0]:.3f} -> {mae[1]:.3f})")
    return not reasons, reasons


def report(shipped: Figures, candidate: Figures, names: tuple[str, str]) -> str:
    """The side-by-side table, the bounds and the verdict, as Markdown."""
    rows = [f"| set | figure | {names[0]} | {names[1]} | change |", "|---|---|---|---|---|"]
    for set_name, key in SHOWN:
        a, b = shipped[set_name][key], candidate[set_name][key]
        rows.append(f"| {set_name} | {key} | {a:.4g} | {b:.4g} | {b - a:+.3g} |")
    rows += ["", "| issue | bound | " + " | ".join(names) + " |", "|---|---|---|---|"]
    before, after = held(shipped), held(candidate)
    for issue, what, _, _ in BOUNDS:
        rows.append(f"| {issue} | {what} | {_mark(before[what])} | {_mark(after[what])} |")
    ok, reasons = verdict(shipped, candidate)
    rows += [
        "",
        f"{names[1]} may ship" if ok else f"{names[1]} may not ship: " + "; ".join(reasons),
    ]
    return "\n".join(rows)


def _mark(holds: bool) -> str:
    return "met" if holds else "not met"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shipped")
    ap.add_argument("candidate")
    ap.add_argument("--runs", type=Path, default=Path("runs/eval"))
    args = ap.parse_args()
    try:
        shipped, candidate = (read_figures(args.runs, n) for n in (args.shipped, args.candidate))
    except FileNotFoundError as exc:
        print(
            f"missing figures: {exc.filename} (run scripts/eval_heldout.sh first)", file=sys.stderr
        )
        return 2
    print(report(shipped, candidate, (args.shipped, args.candidate)))
    return 0 if verdict(shipped, candidate)[0] else 1


if __name__ == "__main__":
    sys.exit(main())
