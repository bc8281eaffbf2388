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


def changed(**edits: float) -> dict:
    """SHIPPED with `set__figure=value` edits."""
    out = copy.deepcopy(SHIPPED)
    for key, value in edits.items():
        set_name, figure = key.split("__")
        out[set_name][figure] = value
    return out


CASES = [  # candidate, whether it may ship, the reasons it may not
    ("better angles, every bound kept", changed(heldout__angle_mae_deg=1.47), True, []),
    ("a false plume more on the hard set (rows 42, 44)",
     changed(heldout__angle_mae_deg=1.47, heldout_hard__frames_with_extra_frac=0.015), False,
     ["breaks hard false plumes <= 1 %"]),
    ("an error no lower (row 40)", changed(heldout__angle_mae_deg=1.492), False,
     ["heldout MAE not lower (1.488 -> 1.492)"]),
    ("over the MAE bound and dim ratio",
     changed(heldout__angle_mae_deg=1.51, heldout_dim__angle_mae_deg=2.1), False,
     ["breaks heldout MAE <= 1.5", "breaks dim MAE <= 1.5 x twins",
      "heldout MAE not lower (1.488 -> 1.510)"]),
    ("a bound unmet before may stay unmet",
     changed(heldout__angle_mae_deg=1.40, heldout__angle_p95_deg=4.3), True, []),
    ("no figure (NaN) holds no bound", changed(heldout_unseen__angle_mae_deg=float("nan"),
     heldout__angle_mae_deg=1.4), False, ["breaks unseen MAE <= 2"]),
]  # fmt: skip


@pytest.mark.parametrize(("candidate", "may_ship", "reasons"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_verdict(candidate: dict, may_ship: bool, reasons: list[str]) -> None:
    assert compare.verdict(SHIPPED, candidate) == (may_ship, reasons)


def write_run(runs: Path, name: str, figures: dict) -> None:
    for set_name, metrics in figures.items():
        (runs / f"{name}_{set_name}").mkdir(parents=True)
        (runs / f"{name}_{set_name}" / "metrics.json").write_text(json.dumps(metrics))


@pytest.mark.parametrize(("candidate", "status", "last_line"), [
    (changed(heldout__angle_mae_deg=1.47), 0, "CAND may ship"),
    (changed(heldout_hard__frames_with_extra_frac=0.02), 1,
     "CAND may not ship: breaks hard false plumes <= 1 %; heldout MAE not lower (1.488 -> 1.488)"),
    (None, 2, ""),
])  # fmt: skip
def test_the_script_reads_the_runs_and_exits_with_its_verdict(
    tmp_path: Path, candidate: dict | None, status: int, last_line: str
) -> None:
    write_run(tmp_path, "SHIP", SHIPPED)
    if candidate is not None:
        write_run(tmp_path, "CAND", candidate)
    run = [sys.executable, str(SCRIPT), "SHIP", "CAND", "--runs", str(tmp_path)]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode == status, done.stderr
    if status == 2:
        assert done.stderr.startswith("missing figures: ") and "CAND_heldout" in done.stderr
        return
    assert done.stdout.strip().splitlines()[-1] == last_line
    assert "| heldout_hard | frames_with_extra_frac | 0.01 |" in done.stdout
