"""The Models page: the leaderboard and the model card shipped in weights/."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from spraycv.paths import WEIGHTS_DIR

LEADERBOARD_CSV = WEIGHTS_DIR / "leaderboard.csv"
LEADERBOARD_MD = WEIGHTS_DIR / "leaderboard.md"
MODEL_CARD = WEIGHTS_DIR / "MODEL_CARD.md"

# What an operator compares, in reading order, with readable headers.
LEADERBOARD_COLUMNS = {
    "name": "model",
    "kind": "kind",
    "angle_mae_deg": "angle MAE (deg)",
    "angle_p95_deg": "angle p95 (deg)",
    "iou": "IoU",
    "boundary_f1": "boundary F1",
    "frames_with_missed_frac": "frames with a missed nozzle",
    "cpu_latency_ms": "CPU latency (ms)",
    "parameters_m": "params (M)",
}


def leaderboard(path: Path = LEADERBOARD_CSV) -> pd.DataFrame:
    """The leaderboard's rows, best first as written, with the columns above (those present)."""
    df = pd.read_csv(path)
    keep = [c for c in LEADERBOARD_COLUMNS if c in df.columns]
    return df[keep].rename(columns=LEADERBOARD_COLUMNS).reset_index(drop=True)


def selection_note(path: Path = LEADERBOARD_MD) -> str | None:
    """The leaderboard's 'Selected: ...' line (which model won, and the rule), if any."""
    if not path.is_file():
        return None
    match = re.search(r"^Selected:.*$", path.read_text(), flags=re.MULTILINE)
    return match.group(0) if match else None


def model_card(path: Path = MODEL_CARD) -> str | None:
    return path.read_text() if path.is_file() else None
