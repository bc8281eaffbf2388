"""Train several configs under one budget, evaluate all on one held-out set, pick the best."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from spraycv.config.loader import load_config
from spraycv.config.train import TrainConfig
from spraycv.evaluation.heldout import Segmenter, evaluate_dataset, read_records
from spraycv.evaluation.latency import median_latency_ms
from spraycv.evaluation.leaderboard import SelectionRule, write_leaderboard
from spraycv.evaluation.plots import plot_accuracy_latency
from spraycv.io.images import read_image


def evaluate_row(
    name: str,
    kind: str,
    segmenter: Segmenter,
    test_data: Path,
    out_dir: Path,
    limit: int | None,
    progress: bool,
) -> dict:
    """One leaderboard row: held-out metrics plus CPU latency on the first test image."""
    report = evaluate_dataset(segmenter, test_data, limit=limit, progress=progress)
    report.write(out_dir / "eval" / name)
    first = read_image(test_data / read_records(test_data)[0]["image"])
    return {
        "name": name,
        "kind": kind,
        **report.summary(),
        "cpu_latency_ms": median_latency_ms(segmenter, first),
    }


def compare(
    configs: Sequence[Path],
    test_data: Path,
    out_dir: Path,
    budget: Sequence[str] = (),
    overrides: Sequence[str] = (),
    rule: SelectionRule | None = None,
    limit: int | None = None,
    reuse: bool = False,
    progress: bool = True,
) -> tuple[list[dict], dict | None, str]:
    """Returns the leaderboard rows, the selected row and why; writes everything under out_dir.

    budget: the same overrides for every run (e.g. ["max_minutes=20", "epochs=50"]).
    reuse: evaluate an existing runs/NAME/best.safetensors instead of training again.
    """
    from spraycv.runtime.predictor import TorchPredictor
    from spraycv.segment.classical import segment_classical
    from spraycv.training.loop import train

    rule = rule or SelectionRule()
    rows = []
    for path in configs:
        cfg = load_config(TrainConfig, path, [*overrides, *budget, f"out_dir={out_dir / 'runs'}"])
        weights = Path(cfg.out_dir) / cfg.name / "best.safetensors"
        if not (reuse and weights.is_file()):
            weights = train(cfg, progress=progress).best_weights
        predictor = TorchPredictor(weights)
        row = evaluate_row(cfg.name, "model", predictor, test_data, out_dir, limit, progress)
        row.update(
            weights=str(weights),
            parameters_m=predictor.meta["parameters"] / 1e6,
            arch=cfg.model.arch,
            encoder=cfg.model.encoder,
        )
        rows.append(row)
    rows.append(
        evaluate_row(
            "classical-threshold",
            "baseline",
            segment_classical,
            test_data,
            out_dir,
            limit,
            progress,
        )
    )
    best, why = rule.select(rows)
    write_leaderboard(rows, out_dir, why, ", ".join([*budget, *overrides]) or "each config's own")
    plot_accuracy_latency(rows, out_dir / "accuracy_vs_latency.png")
    (out_dir / "selection.json").write_text(
        json.dumps({"selected": best, "why": why, "rule": rule.describe()}, indent=2) + "\n"
    )
    return rows, best, why
