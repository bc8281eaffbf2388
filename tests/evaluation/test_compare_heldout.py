"""scripts/compare_heldout.py: two pipelines' held-out figures, and whether one may ship."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from repo_scripts import load_script, script_path

SCRIPT = script_path("compare_heldout")


compare = load_script("compare_heldout")
SHIPPED = {  # the shipped pipeline's figures of 2026-12-01 (S3f), rounded
    "heldout": {"angle_mae_deg": 1.488, "angle_median_deg": 1.058, "angle_p95_deg": 4.125,
                "iou": 0.9095, "frames_with_missed_frac": 0.0325,
                "frames_with_extra_frac": 0.0025},
    "heldout_unseen": {"angle_mae_deg": 1.706},
    "heldout_hard": {"angle_mae_deg": 1.657, "frames_with_missed_frac": 0.05,
                     "frames_with_extra_frac": 0.01},
    "heldout_nospray": {"frames_with_extra_frac": 0.005},
    "heldout_dim": {"angle_mae_deg": 1.895},
    "heldout_dim_twins": {"angle_mae_deg": 1.368},
}  # fmt: skip


def no_gain(tests: int) -> str:
    """The reason a candidate better on nothing is refused, over this many tests."""
    return (
        "better on no angle set, finds no more nozzles and trusts no fewer wrong readings, "
        "by Holm's test at 0.05 over "
        f"{tests} test{'' if tests == 1 else 's'}"
    )


def changed(**edits: float) -> dict:
    """SHIPPED with `set__figure=value` edits."""
    out = copy.deepcopy(SHIPPED)
    for key, value in edits.items():
        set_name, figure = key.split("__")
        out[set_name][figure] = value
    return out


BETTER = {"heldout": compare.PairedChange(-0.05, 0.02, 900)}  # z -2.5
NOISE = {"heldout": compare.PairedChange(0.004, 0.033, 922)}  # row 62's standard set, z +0.1
WORSE = {  # better on long exposures, worse on the standard set
    "heldout_long": compare.PairedChange(-0.2, 0.03, 400),
    "heldout": compare.PairedChange(0.07, 0.03, 900),
}

CASES = [  # candidate, its paired changes, whether it may ship, the reasons it may not
    ("better angles, every bound kept", changed(heldout__angle_mae_deg=1.47), BETTER, True, []),
    ("a false plume more on the hard set (rows 42, 44)",
     changed(heldout__angle_mae_deg=1.47, heldout_hard__frames_with_extra_frac=0.015), BETTER,
     False, ["breaks hard false plumes <= 1 %"]),
    ("a change within the noise (rows 40, 62)", changed(heldout__angle_mae_deg=1.492), NOISE,
     False, [no_gain(1)]),
    ("better on one set, worse on another", SHIPPED, WORSE, False,
     ["worse on heldout (+0.070 deg over 900 readings, z +2.3)"]),
    ("over the MAE bound and dim ratio",
     changed(heldout__angle_mae_deg=1.51, heldout_dim__angle_mae_deg=2.1), NOISE, False,
     ["breaks heldout MAE <= 1.5", "breaks dim MAE <= 1.5 x twins",
      no_gain(1)]),
    ("a bound unmet before may stay unmet",
     changed(heldout__angle_mae_deg=1.40, heldout__angle_p95_deg=4.3), BETTER, True, []),
    ("no figure (NaN) holds no bound", changed(heldout_unseen__angle_mae_deg=float("nan"),
     heldout__angle_mae_deg=1.4), BETTER, False, ["breaks unseen MAE <= 2"]),
    ("no readings to pair", SHIPPED, {}, False,
     [no_gain(0)]),
]  # fmt: skip


FOUND_MORE = {"heldout_wide": compare.FoundChange(17, 3)}  # row 83, z -3.1
FOUND_FEWER = {"heldout": compare.FoundChange(1, 10)}  # z +2.7

CASES += [  # the nozzles found weigh as the angles do (row 83)
    ("finds more nozzles, reads them as well", SHIPPED, {**NOISE, **FOUND_MORE}, True, []),
    ("better angles, nozzles lost", changed(heldout__angle_mae_deg=1.47),
     {**BETTER, **FOUND_MORE, **FOUND_FEWER}, False,
     ["finds fewer nozzles on heldout (1 gained, 10 lost, z +2.7)"]),
]  # fmt: skip


def many_sets(**z_by_set: float) -> dict:
    """Paired changes on all 17 sets, z 0 but where given (se 0.01 deg, 900 readings), and
    nozzle tests with nothing gained or lost: a full judgement's 34 tests."""
    out: dict = {s: compare.PairedChange(0.0, 0.01, 900) for s in compare.PAIRED_SETS}
    out |= {s: compare.PairedChange(0.01 * z, 0.01, 900) for s, z in z_by_set.items()}
    found = {f"{s} nozzles": compare.FoundChange(0, 0) for s in compare.PAIRED_SETS}
    return out | found


CASES += [  # one direction's tests are judged together (Holm, row 199)
    ("one set worse by z 2.4 of 34 tests (chance), another better by z 4",
     changed(heldout__angle_mae_deg=1.47), many_sets(heldout_small=2.4, heldout_long=-4.0),
     True, []),
    ("one set worse by z 3.5 of 34 tests", changed(heldout__angle_mae_deg=1.47),
     many_sets(heldout_small=3.5, heldout_long=-4.0), False,
     ["worse on heldout_small (+0.035 deg over 900 readings, z +3.5)"]),
    ("better by z 2.5 on one set of 34 tests (chance)", SHIPPED, many_sets(heldout=-2.5),
     False, [no_gain(34)]),
]  # fmt: skip


CASES += [  # confidently wrong readings, pooled over the sets as one test (row 203)
    ("better angles, many more readings far off", changed(heldout__angle_mae_deg=1.47),
     {**BETTER, "wrong": compare.WrongChange(20, 2)}, False,
     ["trusts more readings over 10 deg off (20 new, 2 fixed, z +3.8)"]),
    ("a few more readings far off (chance)", changed(heldout__angle_mae_deg=1.47),
     {**BETTER, "wrong": compare.WrongChange(14, 8)}, True, []),
    ("fewer readings far off, the angles as well", SHIPPED,
     {**NOISE, "wrong": compare.WrongChange(0, 12)}, True, []),
]  # fmt: skip


@pytest.mark.parametrize(("candidate", "paired", "may_ship", "reasons"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_verdict(candidate: dict, paired: dict, may_ship: bool, reasons: list[str]) -> None:
    angles = {k: c for k, c in paired.items() if isinstance(c, compare.PairedChange)}
    found = {k: c for k, c in paired.items() if isinstance(c, compare.FoundChange)}
    wrong = paired.get("wrong")
    assert compare.verdict(SHIPPED, candidate, angles, found, None, wrong) == (may_ship, reasons)


HALVES_BETTER = {"independent": compare.PairedChange(-0.59, 0.055, 309)}  # row 160, z -10.7
HALVES_WORSE = {"heldout": compare.PairedChange(0.1, 0.03, 900)}  # z +3.3


@pytest.mark.parametrize(("angles", "halves", "may_ship", "reasons"), [
    (NOISE, HALVES_BETTER, True, []),  # the symmetry read better, the included angle as well
    (BETTER, HALVES_WORSE, False,
     ["half angles worse on heldout (+0.100 deg over 900 readings, z +3.3)"]),
    (NOISE, {}, False, [no_gain(1)]),
])  # fmt: skip
def test_the_half_angles_weigh_as_the_included_angle(angles, halves, may_ship, reasons):
    candidate = changed(heldout__angle_mae_deg=1.47)
    assert compare.verdict(SHIPPED, candidate, angles, {}, halves) == (may_ship, reasons)


@pytest.mark.parametrize(("shipped", "candidate", "gained", "lost"), [
    ({"a": {0, 1}, "b": {0}}, {"a": {0, 1, 2}, "b": set()}, 1, 1),
    ({"a": {0}}, {"a": {0}, "c": {0, 1}}, 0, 0),  # a frame only one run read is not paired
])  # fmt: skip
def test_the_nozzles_found_are_paired_by_frame(shipped, candidate, gained, lost):
    assert compare.found_change(shipped, candidate) == compare.FoundChange(gained, lost)


@pytest.mark.parametrize(("shipped", "candidate", "expected"), [
    ({("a", 0): 1.0, ("a", 1): 2.0}, {("a", 0): 0.5, ("a", 1): 1.0}, (-0.75, 0.25, 2)),
    ({("a", 0): 1.0, ("b", 0): 2.0}, {("a", 0): 3.0, ("c", 0): 0.0}, None),  # one in common
])  # fmt: skip
def test_the_paired_change_is_over_the_nozzles_both_read(shipped, candidate, expected):
    change = compare.paired_change(shipped, candidate)
    if expected is None:
        assert change is None
        return
    assert (change.mean, change.se, change.n) == pytest.approx(expected)


@pytest.mark.parametrize(("shipped", "candidate", "new", "fixed"), [
    ([("a", 0), ("b", 1)], [("b", 1), ("c", 0)], 1, 1),
    ([], [("a", 0), ("a", 1)], 2, 0),
])  # fmt: skip
def test_confidently_wrong_readings_are_paired_by_nozzle(tmp_path, shipped, candidate, new, fixed):
    for name, wrong in (("SHIP", shipped), ("CAND", candidate)):
        (tmp_path / f"{name}_heldout").mkdir()
        frames = [{"id": f, "nozzles": [{"gt_index": i, "included_error_deg": 30.0 * (i + 1),
                                          "unreliable": ""}]} for f, i in wrong]  # fmt: skip
        frames += [{"id": "z", "nozzles": [{"gt_index": 0, "included_error_deg": 9.9,
                                            "unreliable": ""}, {"gt_index": 1,
                                            "included_error_deg": 40.0,
                                            "unreliable": "poor_fit"}]}]  # fmt: skip
        lines = "\n".join(json.dumps(f) for f in frames)
        (tmp_path / f"{name}_heldout" / "frames.jsonl").write_text(lines + "\n")
    per_set = compare.read_wrong(tmp_path, ("SHIP", "CAND"))
    assert per_set == {"heldout": (len(shipped), len(candidate), compare.WrongChange(new, fixed))}
    assert compare.pooled_wrong(per_set) == compare.WrongChange(new, fixed)
    assert compare.pooled_wrong({}) is None


def write_run(runs: Path, name: str, figures: dict, errors: list[float]) -> None:
    """metrics.json of each set, and the standard set's frames.jsonl: one nozzle per frame
    with the given included-angle errors (the last one unreliable: never paired)."""
    for set_name, metrics in figures.items():
        (runs / f"{name}_{set_name}").mkdir(parents=True)
        (runs / f"{name}_{set_name}" / "metrics.json").write_text(json.dumps(metrics))
    last = len(errors) - 1
    frames = [
        {"id": f"{i:06d}", "nozzles": [{"gt_index": 0, "included_error_deg": e,
                                        "left_error_deg": e / 2, "right_error_deg": e / 2,
                                        "unreliable": "no_apex_support" if i == last else ""}]}
        for i, e in enumerate(errors)
    ]  # fmt: skip
    lines = "\n".join(json.dumps(f) for f in frames)
    (runs / f"{name}_heldout" / "frames.jsonl").write_text(lines + "\n")


SHIPPED_ERRORS = [1.0, -2.0, 1.5, 0.5, -1.0, 3.0, 9.0]
BETTER_ERRORS = [0.5, -1.0, 0.5, 0.2, -0.5, 1.0, 0.0]  # each nozzle read better


@pytest.mark.parametrize(("candidate", "errors", "status", "last_line"), [
    (changed(heldout__angle_mae_deg=1.47), BETTER_ERRORS, 0, "CAND may ship"),
    (changed(heldout_hard__frames_with_extra_frac=0.02), SHIPPED_ERRORS, 1,
     "CAND may not ship: breaks hard false plumes <= 1 %; "
     "better on no angle set, finds no more nozzles and trusts no fewer wrong readings, by "
     "Holm's test at 0.05 over 4 tests"),
    (None, [], 2, ""),
])  # fmt: skip
def test_the_script_reads_the_runs_and_exits_with_its_verdict(
    tmp_path: Path, candidate: dict | None, errors: list[float], status: int, last_line: str
) -> None:
    write_run(tmp_path, "SHIP", SHIPPED, SHIPPED_ERRORS)
    if candidate is not None:
        write_run(tmp_path, "CAND", candidate, errors)
    run = [sys.executable, str(SCRIPT), "SHIP", "CAND", "--runs", str(tmp_path)]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode == status, done.stderr
    if status == 2:
        assert done.stderr.startswith("missing figures: ") and "CAND_heldout" in done.stderr
        return
    assert done.stdout.strip().splitlines()[-1] == last_line
    assert "| heldout_hard | frames_with_extra_frac | 0.01 |" in done.stdout
    assert "| heldout | 6 |" in done.stdout  # the unreliable nozzle is not paired
    halves = done.stdout.split("half-angle error change")[1]
    assert "| heldout | 6 |" in halves  # the halves are paired as the included angle is
    wrong = done.stdout.split("trusted readings over 10 deg off")[1]
    assert "| heldout | 0 | 0 | 0 | 0 |" in wrong  # 9.0 deg off is not far off; the last
    # nozzle is flagged


def _frame(frame_id: str, error: float, missed: int) -> str:
    nozzle = {"gt_index": 0, "included_error_deg": error, "unreliable": ""}
    return json.dumps({"id": frame_id, "iou": 0.9, "dice": 0.95, "boundary_f1": 0.8,
                       "seconds": 0.1, "n_truth": 1 + missed, "missed": missed, "extra": 0,
                       "nozzles": [nozzle]})  # fmt: skip


def test_the_draws_are_pooled_frame_by_frame(tmp_path: Path) -> None:
    # (errors, missed) per frame of each draw: pooled, the median is that of the four
    # readings (3.0; the draws' medians average 4.0) and one frame of four has a missed
    # nozzle (the draws' rates average 1/3)
    draws = ([(1.0, 0), (1.0, 0)], [(5.0, 1)], [(6.0, 0)])
    for set_name, frames in zip(compare.POOLED_SETS, draws, strict=True):
        run = tmp_path / f"CAND_{set_name}"
        run.mkdir()
        lines = [_frame(f"{i:06d}", error, missed) for i, (error, missed) in enumerate(frames)]
        (run / "frames.jsonl").write_text("\n".join(lines) + "\n")
    pooled = compare.read_pooled(tmp_path, "CAND")
    assert pooled["frames"] == 4
    assert pooled["angle_median_deg"] == pytest.approx(3.0)
    assert pooled["frames_with_missed_frac"] == pytest.approx(1 / 4)
    (tmp_path / "CAND_heldout_draw3" / "frames.jsonl").unlink()
    assert compare.read_pooled(tmp_path, "CAND") is None  # a draw missing: nothing pooled
