"""Per-epoch logs: a CSV file people can open, and TensorBoard event files."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any


class RunLogger:
    """Appends one row per epoch to `metrics.csv` and writes scalars to TensorBoard (rank 0)."""

    def __init__(self, run_dir: Path, enabled: bool = True):
        self.enabled = enabled
        self.csv_path = run_dir / "metrics.csv"
        self._writer = None
        if enabled:
            run_dir.mkdir(parents=True, exist_ok=True)
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._writer = SummaryWriter(log_dir=str(run_dir / "tensorboard"))
            except ImportError:  # tensorboard is optional: the CSV log stays
                self._writer = None

    def log(self, epoch: int, row: dict[str, Any]) -> None:
        """Record one epoch's values (numbers go to TensorBoard, everything to the CSV)."""
        if not self.enabled:
            return
        row = {"epoch": epoch, **row}
        new = not self.csv_path.exists()
        with self.csv_path.open("a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        if self._writer is not None:
            for key, value in row.items():
                if isinstance(value, int | float) and key != "epoch":
                    self._writer.add_scalar(key.replace("_", "/", 1), value, epoch)
            self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
