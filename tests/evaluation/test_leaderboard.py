from __future__ import annotations

from pathlib import Path

import pytest

from spraycv.evaluation.leaderboard import SelectionRule, write_leaderboard


def row(
    name: str, mae: float, latency: float, missed: float = 0.0, iou: float = 0.95, kind="model"
):
    return {
        "name": name,
        "kind": kind,
        "angle_mae_deg": mae,
        "cpu_latency_ms": latency,
        "frames_with_missed_frac": missed,
        "iou": iou,
        "angle_p95_deg": 2 * mae,
    }


@pytest.mark.parametrize(
    ("rows", "winner", "note"),
    [
        ([row("a", 0.8, 50), row("b", 0.6, 60)], "b", ""),
        ([row("a", 0.8, 50), row("fast-but-slow", 0.3, 500)], "a", ""),  # over the budget
        ([row("a", 0.8, 50), row("misses", 0.2, 40, missed=0.05)], "a", ""),
        ([row("a", 0.5, 50, iou=0.9), row("b", 0.5, 60, iou=0.97)], "b", ""),  # tie -> IoU
        ([row("slow", 0.9, 500), row("slower", 0.7, 900)], "slower", "no model met the budget"),
        ([row("classical", 0.1, 5, kind="baseline"), row("a", 0.9, 50)], "a", ""),
    ],
)
def test_selection_rule(rows, winner, note):
    best, why = SelectionRule(max_latency_ms=100).select(rows)
    assert best["name"] == winner
    assert note in why and "lowest included-angle MAE" in why


def test_no_model_selects_nothing():
    best, why = SelectionRule().select([row("classical", 1.0, 5, kind="baseline")])
    assert best is None and "no trained model" in why


def test_leaderboard_files(tmp_path: Path):
    rows = [row("a", 0.8, 50), row("b", 0.6, 60)]
    md, csv_path = write_leaderboard(rows, tmp_path, "b because")
    text = md.read_text()
    assert text.index("| b ") < text.index("| a ")  # sorted by MAE
    assert "Selected: b because" in text
    assert csv_path.read_text().count("\n") == 3
