"""Two pipelines' held-out figures side by side, and whether the candidate may ship.

Reads runs/eval/NAME_SET/metrics.json, as `bash scripts/eval_heldout.sh NAME ...` writes them,
for the shipped pipeline's NAME and a candidate's. Prints one row per figure, the candidate's
change, each acceptance bound of issues 13 and 15 that it holds or breaks, and per held-out
angle set the paired change of the angle error over the nozzles both pipelines read (from
frames.jsonl). A candidate may ship only when it breaks no bound that the shipped pipeline
holds (rows 35, 41 and 42 of docs/experiments.md were better on the angle and broke the hard
set's false-plume bound), is significantly worse on no angle set (the paired change of the
angle error), finds significantly fewer nozzles on none (McNemar's statistic over the true
nozzles that one pipeline finds and the other misses), trusts significantly more readings far
off over all the sets (McNemar's statistic over the nozzles whose trusted reading is more than
WRONG_DEG off in one run only; row 203), and is significantly better by one of these measures.
"Significantly" is family-wise: Holm's step-down test at FAMILY_ALPHA over every test of one
direction (three per set, 17 sets, and the pooled one). A z beyond 2 on any
one test, the rule until row 199, refused about two thirds of candidates that change nothing
and shipped a fifth of them (`python benchmarks/ship_rule_null.py`). The halves of the
included angle (left and right of the axis: the spray's symmetry) are paired and judged as the
included angle is (row 160). A set's MAE alone moves by noise: the standard set's 1.484 ->
1.489 deg was +0.003 deg over the 921 nozzles both pipelines read, 0.1 standard errors
(docs/experiments.md, row 62).

Usage:
    python scripts/compare_heldout.py S3f S6A [--runs runs/eval]
Exit status: 0 when the candidate may ship, 1 when it may not, 2 when figures are missing.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from spraycv.evaluation.heldout import FrameResult, summarise
from spraycv.evaluation.significance import first_z, holm, mcnemar_z

Figures = dict[str, dict[str, float]]  # set -> metrics.json
Errors = dict[tuple[str, int], float]  # (frame id, true nozzle) -> absolute angle error, deg

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
PAIRED_SETS = (  # the angle sets compared reading by reading, where both runs have them
    "heldout", "heldout_draw2", "heldout_draw3", "heldout_unseen", "heldout_hard",
    "heldout_dim", "heldout_dim_twins", "heldout_long", "heldout_long_twins", "independent",
    "heldout_bodies", "heldout_wide", "heldout_43", "heldout_portrait", "heldout_small",
    "heldout_sun", "heldout_sheet",
)  # fmt: skip
POOLED_SETS = ("heldout", "heldout_draw2", "heldout_draw3")  # one look, three draws (row 111)
POOLED_SHOWN = (
    "angle_mae_deg", "angle_median_deg", "angle_p95_deg", "iou", "frames_with_missed_frac",
    "frames_with_extra_frac",
)  # fmt: skip
WRONG_DEG = 10.0  # a trusted reading further off than this is confidently wrong: a user acts
# on the number the pipeline trusts (row 203's candidate trusted more of them than it fixed)
FAMILY_ALPHA = 0.05  # the chance that a candidate that changes nothing is called worse
# (or better) on some set: Holm's test over all of a direction's tests holds it at this
# (spraycv.evaluation.significance)


@dataclass(frozen=True)
class PairedChange:
    """The candidate's angle error minus the shipped one's over the n readings both give."""

    mean: float  # deg; < 0: the candidate reads better
    se: float  # its standard error
    n: int

    @property
    def z(self) -> float:
        return self.mean / self.se if self.se > 0 else 0.0


@dataclass(frozen=True)
class FoundChange:
    """True nozzles the candidate finds and the shipped pipeline misses (gained), and the
    reverse (lost), over the frames both read."""

    gained: int
    lost: int

    @property
    def z(self) -> float:
        """McNemar's statistic; < 0: the candidate finds more."""
        return mcnemar_z(self.lost, self.gained)


@dataclass(frozen=True)
class WrongChange:
    """True nozzles whose trusted reading is confidently wrong (more than WRONG_DEG off) in
    the candidate's run only (new), and in the shipped pipeline's only (fixed)."""

    new: int
    fixed: int

    @property
    def z(self) -> float:
        """McNemar's statistic; > 0: the candidate is wrong more."""
        return mcnemar_z(self.new, self.fixed)


def confidently_wrong(frames_jsonl: Path) -> set[tuple[str, int]]:
    """The nozzles whose trusted included-angle reading is more than WRONG_DEG off."""
    return {k for k, error in nozzle_errors(frames_jsonl).items() if error > WRONG_DEG}


def read_wrong(runs: Path, names: tuple[str, str]) -> dict[str, tuple[int, int, WrongChange]]:
    """Per paired set both runs have frames of: how many nozzles each run reads confidently
    wrong, and the change."""
    out = {}
    for set_name in PAIRED_SETS:
        paths = [runs / f"{name}_{set_name}" / "frames.jsonl" for name in names]
        if all(p.is_file() for p in paths):
            shipped, candidate = (confidently_wrong(p) for p in paths)
            change = WrongChange(len(candidate - shipped), len(shipped - candidate))
            out[set_name] = (len(shipped), len(candidate), change)
    return out


def pooled_wrong(per_set: dict[str, tuple[int, int, WrongChange]]) -> WrongChange | None:
    """The sets' changes summed (one test: a few such readings a set are too few to judge
    set by set); None without sets."""
    if not per_set:
        return None
    changes = [change for _, _, change in per_set.values()]
    return WrongChange(sum(c.new for c in changes), sum(c.fixed for c in changes))


def nozzles_found(frames_jsonl: Path) -> dict[str, set[int]]:
    """Per frame id, the true nozzles that a plume was matched to (an unreliable one too)."""
    found = {}
    for line in frames_jsonl.read_text().splitlines():
        frame = json.loads(line)
        found[frame["id"]] = {nz["gt_index"] for nz in frame["nozzles"]}
    return found


def found_change(shipped: dict[str, set[int]], candidate: dict[str, set[int]]) -> FoundChange:
    frames = shipped.keys() & candidate.keys()
    gained = sum(len(candidate[f] - shipped[f]) for f in frames)
    return FoundChange(gained, sum(len(shipped[f] - candidate[f]) for f in frames))


def _included_error(nozzle: dict) -> float | None:
    """The absolute included-angle error (None: not measured)."""
    error = nozzle["included_error_deg"]
    return None if error is None else abs(error)


def _halves_error(nozzle: dict) -> float | None:
    """The mean absolute error of the left and right half angles (None: not measured)."""
    sides = (nozzle.get("left_error_deg"), nozzle.get("right_error_deg"))
    return None if None in sides else (abs(sides[0]) + abs(sides[1])) / 2


ANGLE_ERRORS: dict[str, Callable[[dict], float | None]] = {  # frames.jsonl nozzle -> error
    "included": _included_error,
    "halves": _halves_error,
}


def nozzle_errors(frames_jsonl: Path, measure: str = "included") -> Errors:
    """The absolute angle error (ANGLE_ERRORS[measure]) of each nozzle read with an angle it
    trusts."""
    errors, error_of = {}, ANGLE_ERRORS[measure]
    for line in frames_jsonl.read_text().splitlines():
        frame = json.loads(line)
        for nz in frame["nozzles"]:
            error = error_of(nz)
            if not nz.get("unreliable") and error is not None and math.isfinite(error):
                errors[(frame["id"], nz["gt_index"])] = error
    return errors


def paired_change(shipped: Errors, candidate: Errors) -> PairedChange | None:
    """The paired change over the nozzles both read; None with fewer than two."""
    common = sorted(shipped.keys() & candidate.keys())
    if len(common) < 2:
        return None
    diff = [candidate[k] - shipped[k] for k in common]
    return PairedChange(
        statistics.fmean(diff), statistics.stdev(diff) / math.sqrt(len(diff)), len(diff)
    )


def read_paired(
    runs: Path, names: tuple[str, str]
) -> tuple[dict[str, PairedChange], dict[str, FoundChange], dict[str, PairedChange]]:
    """The paired change of the included angle, the change in nozzles found, and the paired
    change of the half angles, on each set both runs have frames of."""
    angles, found, halves = {}, {}, {}
    for set_name in PAIRED_SETS:
        paths = [runs / f"{name}_{set_name}" / "frames.jsonl" for name in names]
        if all(p.is_file() for p in paths):
            found[set_name] = found_change(*(nozzles_found(p) for p in paths))
            for measure, out in (("included", angles), ("halves", halves)):
                change = paired_change(*(nozzle_errors(p, measure) for p in paths))
                if change is not None:
                    out[set_name] = change
    return angles, found, halves


def read_pooled(runs: Path, name: str) -> dict[str, float | None] | None:
    """Run NAME's figures over the frames of every draw of the held-out look, pooled: 400
    frames place a missed-frame rate within about +-0.7 % (row 111); None without them all."""
    paths = [runs / f"{name}_{s}" / "frames.jsonl" for s in POOLED_SETS]
    if not all(p.is_file() for p in paths):
        return None
    lines = [line for p in paths for line in p.read_text().splitlines()]
    return summarise([FrameResult(**json.loads(line)) for line in lines])


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


def verdict(
    shipped: Figures,
    candidate: Figures,
    paired: dict[str, PairedChange],
    found: dict[str, FoundChange] | None = None,
    halves: dict[str, PairedChange] | None = None,
    wrong: WrongChange | None = None,
) -> tuple[bool, list[str]]:
    """Whether the candidate may ship, and why not: each bound it breaks that the shipped
    pipeline holds, each set it reads significantly worse (the included angle or its halves)
    or finds significantly fewer nozzles on, significantly more confidently wrong readings
    over all sets (`wrong`), and no gain of any of these kinds (row 83: a change that finds
    nozzles and reads them as well is better too)."""
    found, halves = found or {}, halves or {}
    before, after = held(shipped), held(candidate)
    reasons = [f"breaks {what}" for what in before if before[what] and not after[what]]
    tests = [  # (what a significant harm says, z: > 0 the candidate is worse)
        *((f"worse on {k} ({c.mean:+.3f} deg over {c.n} readings, z {c.z:+.1f})", c.z)
          for k, c in paired.items()),
        *((f"half angles worse on {k} ({c.mean:+.3f} deg over {c.n} readings, z {c.z:+.1f})",
           c.z) for k, c in halves.items()),
        *((f"finds fewer nozzles on {k} ({c.gained} gained, {c.lost} lost, z {c.z:+.1f})", c.z)
          for k, c in found.items()),
    ]  # fmt: skip
    if wrong is not None:
        tests.append((f"trusts more readings over {WRONG_DEG:g} deg off ({wrong.new} new, "
                      f"{wrong.fixed} fixed, z {wrong.z:+.1f})", wrong.z))  # fmt: skip
    zs = [z for _, z in tests]
    worse = holm(zs, FAMILY_ALPHA)
    reasons += [why for (why, _), w in zip(tests, worse, strict=True) if w]
    if not any(holm([-z for z in zs], FAMILY_ALPHA)):
        reasons.append(
            "better on no angle set, finds no more nozzles and trusts no fewer wrong "
            "readings, by Holm's test at "
            f"{FAMILY_ALPHA:g} over {len(zs)} test{'' if len(zs) == 1 else 's'}"
        )
    return not reasons, reasons


def report(
    shipped: Figures,
    candidate: Figures,
    paired: dict[str, PairedChange],
    names: tuple[str, str],
    found: dict[str, FoundChange] | None = None,
    pooled: tuple[dict, dict] | None = None,
    halves: dict[str, PairedChange] | None = None,
    wrong: dict[str, tuple[int, int, WrongChange]] | None = None,
) -> str:
    """The side-by-side table, the bounds, the paired changes, the confidently wrong
    readings, the pooled draws (shown, not judged) and the verdict, as Markdown."""
    rows = [f"| set | figure | {names[0]} | {names[1]} | change |", "|---|---|---|---|---|"]
    for set_name, key in SHOWN:
        a, b = shipped[set_name][key], candidate[set_name][key]
        rows.append(f"| {set_name} | {key} | {a:.4g} | {b:.4g} | {b - a:+.3g} |")
    rows += ["", "| issue | bound | " + " | ".join(names) + " |", "|---|---|---|---|"]
    before, after = held(shipped), held(candidate)
    for issue, what, _, _ in BOUNDS:
        rows.append(f"| {issue} | {what} | {_mark(before[what])} | {_mark(after[what])} |")
    rows += ["", "| set | readings both give | error change (deg) | z |", "|---|---|---|---|"]
    rows += [f"| {k} | {c.n} | {c.mean:+.3f} | {c.z:+.1f} |" for k, c in paired.items()]
    rows += ["", "| set | readings both give | half-angle error change (deg) | z |"]
    rows += ["|---|---|---|---|"]
    rows += [f"| {k} | {c.n} | {c.mean:+.3f} | {c.z:+.1f} |" for k, c in (halves or {}).items()]
    rows += ["", "| set | nozzles found by the candidate only | by the shipped only | z |"]
    rows += ["|---|---|---|---|"]
    rows += [f"| {k} | {c.gained} | {c.lost} | {c.z:+.1f} |" for k, c in (found or {}).items()]
    rows += wrong_rows(wrong or {}, names)
    if pooled is not None:
        rows += ["", f"| pooled over {', '.join(POOLED_SETS)} | " + " | ".join(names) + " |"]
        rows += ["|---|---|---|"]
        rows += [f"| {k} | {pooled[0][k]:.4g} | {pooled[1][k]:.4g} |" for k in POOLED_SHOWN]
    wrong_all = pooled_wrong(wrong or {})
    ok, reasons = verdict(shipped, candidate, paired, found, halves, wrong_all)
    m = len(paired) + len(halves or {}) + len(found or {}) + (wrong_all is not None)
    rows += [
        "",
        f"Holm's test at {FAMILY_ALPHA:g} over the {m} tests of each direction: a change "
        f"counts from |z| {first_z(m, FAMILY_ALPHA):.2f} (the strongest) down.",
        "",
        f"{names[1]} may ship" if ok else f"{names[1]} may not ship: " + "; ".join(reasons),
    ]
    return "\n".join(rows)


def wrong_rows(wrong: dict[str, tuple[int, int, WrongChange]], names: tuple[str, str]) -> list[str]:
    """The table of confidently wrong readings per set, and their pooled test."""
    total = pooled_wrong(wrong)
    if total is None:
        return []
    rows = ["", f"| set | trusted readings over {WRONG_DEG:g} deg off: {names[0]} | {names[1]} "
            "| new | fixed |", "|---|---|---|---|---|"]  # fmt: skip
    rows += [f"| {k} | {a} | {b} | {c.new} | {c.fixed} |" for k, (a, b, c) in wrong.items()]
    a, b = (sum(v[i] for v in wrong.values()) for i in (0, 1))
    rows.append(f"| all (one test, z {total.z:+.1f}) | {a} | {b} | {total.new} | {total.fixed} |")
    return rows


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
    names = (args.shipped, args.candidate)
    paired, found, halves = read_paired(args.runs, names)
    wrong = read_wrong(args.runs, names)
    both = tuple(read_pooled(args.runs, n) for n in names)
    pooled = both if all(both) else None
    print(report(shipped, candidate, paired, names, found, pooled, halves, wrong))
    ok, _ = verdict(shipped, candidate, paired, found, halves, pooled_wrong(wrong))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
