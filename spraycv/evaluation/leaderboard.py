"""Leaderboard of compared models and the declared rule that picks the best one."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

COLUMNS = (  # (key, header, format)
    ("name", "model", "{}"),
    ("iou", "IoU", "{:.4f}"),
    ("dice", "Dice", "{:.4f}"),
    ("boundary_f1", "boundary F1", "{:.4f}"),
    ("angle_mae_deg", "angle MAE (deg)", "{:.3f}"),
    ("angle_p95_deg", "angle p95 (deg)", "{:.3f}"),
    ("frames_with_missed_frac", "frames with a missed nozzle", "{:.3%}"),
    ("parameters_m", "params (M)", "{:.2f}"),
    ("cpu_latency_ms", "CPU latency (ms)", "{:.1f}"),
)


@dataclass(frozen=True)
class SelectionRule:
    """Lowest angle MAE among models under the latency budget that miss few nozzles."""

    max_latency_ms: float = 100.0
    max_missed_frac: float = 0.01

    def describe(self) -> str:
        return (
            f"lowest included-angle MAE among trained models with CPU latency <= "
            f"{self.max_latency_ms:g} ms and at most {self.max_missed_frac:.0%} of frames with "
            "a missed nozzle (if none qualifies: lowest MAE overall); ties broken by IoU"
        )

    def select(self, rows: Sequence[dict]) -> tuple[dict | None, str]:
        """The winning row and a sentence saying why."""
        models = [r for r in rows if r.get("kind") == "model" and _finite(r.get("angle_mae_deg"))]
        if not models:
            return None, "no trained model has a finite angle MAE"
        ok = [
            r
            for r in models
            if r["cpu_latency_ms"] <= self.max_latency_ms
            and r["frames_with_missed_frac"] <= self.max_missed_frac
        ]
        pool, note = (ok, "") if ok else (models, " (no model met the budget; best overall)")
        best = min(pool, key=lambda r: (r["angle_mae_deg"], -r["iou"]))
        why = (
            f"{best['name']}: angle MAE {best['angle_mae_deg']:.3f} deg, IoU {best['iou']:.4f}, "
            f"{best['cpu_latency_ms']:.1f} ms on the CPU; rule: {self.describe()}{note}"
        )
        return best, why


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _cell(fmt: str, value: object) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return fmt.format(value)


def write_leaderboard(
    rows: Sequence[dict], out_dir: Path, selection: str, budget: str = ""
) -> tuple[Path, Path]:
    """leaderboard.md (sorted by angle MAE, with the training budget and the selection) and
    leaderboard.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: r.get("angle_mae_deg") or math.inf)
    md = ["| " + " | ".join(h for _, h, _ in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    md += ["| " + " | ".join(_cell(f, r.get(k)) for k, _, f in COLUMNS) + " |" for r in ordered]
    md_path = out_dir / "leaderboard.md"
    budget_line = f"\n\nBudget of every trained model: {budget}" if budget else ""
    md_path.write_text("\n".join(md) + f"{budget_line}\n\nSelected: {selection}\n")
    csv_path = out_dir / "leaderboard.csv"
    keys = sorted({k for r in rows for k in r})
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(ordered)
    return md_path, csv_path
