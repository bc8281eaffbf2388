"""Evaluation pictures: angle-error histogram, worst cases, accuracy against latency."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from spraycv.evaluation.heldout import EvalReport, FrameResult, Segmenter, TruthFrame
from spraycv.measure import Measurer
from spraycv.viz.overlay import draw_overlay


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and in CI
    import matplotlib.pyplot as plt

    return plt


def plot_angle_histogram(report: EvalReport, path: Path, title: str = "") -> Path:
    """Histogram of absolute included-angle errors (deg) with median and p95 marked."""
    plt = _pyplot()
    errors = report.angle_errors()
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    if errors.size:
        ax.hist(errors, bins=min(40, max(5, errors.size // 5)), color="#3b7dd8")
        for q, style in ((50, "--"), (95, ":")):
            v = float(np.percentile(errors, q))
            ax.axvline(v, color="k", linestyle=style, label=f"p{q} = {v:.2f} deg")
        ax.legend()
    ax.set_xlabel("|included-angle error| (deg)")
    ax.set_ylabel("nozzles")
    ax.set_title(title or f"{errors.size} nozzles")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _badness(frame: FrameResult) -> float:
    """How bad a frame went: its worst angle error (deg), plus 100 per missed or extra plume."""
    worst = max((abs(n["included_error_deg"]) for n in frame.nozzles), default=0.0)
    return worst + 100.0 * (frame.missed + frame.extra)


def _worst(report: EvalReport, k: int) -> list[FrameResult]:
    return sorted(report.frames, key=_badness, reverse=True)[:k]


def _tile(picture: np.ndarray, frame: FrameResult, tile: int) -> np.ndarray:
    """The picture fitted into a (tile, tile, 3) square (aspect kept), titled."""
    scale = tile / max(picture.shape[:2])
    size = (max(1, round(picture.shape[1] * scale)), max(1, round(picture.shape[0] * scale)))
    square = np.zeros((tile, tile, 3), np.uint8)
    square[: size[1], : size[0]] = cv2.resize(picture, size, interpolation=cv2.INTER_AREA)
    cv2.putText(
        square,
        f"{frame.id} err {_badness(frame):.1f}",
        (4, 16),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.45,
        (255, 255, 255),
        1,
        cv2.LINE_AA,
    )
    return square


def _write_grid(tiles: list[np.ndarray], path: Path, tile: int) -> Path:
    """Tiles three to a row as one picture."""
    while len(tiles) % 3:
        tiles.append(np.zeros((tile, tile, 3), np.uint8))
    rows = [np.hstack(tiles[i : i + 3]) for i in range(0, len(tiles), 3)]
    cv2.imwrite(str(path), np.vstack(rows) if rows else np.zeros((tile, tile, 3), np.uint8))
    return path


def worst_cases(
    report: EvalReport,
    frames: Sequence[TruthFrame],
    segmenter: Segmenter | Measurer,
    path: Path,
    k: int = 6,
    tile: int = 320,
) -> Path:
    """A grid of the k frames with the largest angle error or a missed nozzle: each with the
    measured overlay and its truth in green (a rendered mask's outline, labelled lines).
    `frames` are the evaluated frames of truth (heldout.evaluate_frames)."""
    by_id = {frame.id: frame for frame in frames}
    tiles = []
    for result in _worst(report, k):
        frame = by_id[result.id]
        image = frame.image()
        _, reading = frame.evaluate(image, segmenter)
        picture = frame.draw_truth(draw_overlay(image, reading.mask, reading.measurements))
        tiles.append(_tile(picture, result, tile))
    return _write_grid(tiles, path, tile)


def plot_accuracy_latency(rows: Sequence[dict], path: Path) -> Path:
    """Scatter of angle MAE against CPU latency, one labelled point per leaderboard row."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    for row in rows:
        x, y = row.get("cpu_latency_ms"), row.get("angle_mae_deg")
        if x is None or y is None or not (np.isfinite(x) and np.isfinite(y)):
            continue
        ax.scatter([x], [y], s=40)
        ax.annotate(row["name"], (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xlabel("CPU latency per image (ms, batch 1)")
    ax.set_ylabel("included-angle MAE (deg)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
