"""What a better apex would buy: the refiner's two side lines fitted through a given apex
instead of free (issue 13's median and p95 bounds; docs/experiments.md, row 64).

The shipped pipeline reads each plume's sides on its canonical crop and fits each line
freely; the apex is where they meet. Here each side line is instead fitted through an apex
taken from elsewhere, by mode:
- `free`: the shipped fit (the baseline);
- `true`: the true apex of the nearest nozzle (within 15 px of the reading's; else free);
- `true+S`: that apex moved by Gaussian noise of S px per axis (seeded per frame);
- `peak`: the nearest apex-head peak (within 15 px; else free);
- `own`: the reading's apex before the crop was read.
Every mode is read end to end on the same masks (benchmarks/pipeline_variants.py's replay).
A what-if: the pinned fit replaces `spraycv.refine.stage.side_line` for the run only.

Usage: python benchmarks/apex_what_if.py --data datasets/val_std --n 150 free true true+0.5 peak
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

import spraycv.refine.stage as stage
from spraycv.evaluation.heldout import EvalReport, evaluate_frame, read_records
from spraycv.geometry.linefit import LineFit
from spraycv.io.images import read_image, to_binary_mask
from spraycv.measure import load_measurer
from spraycv.paths import default_weights
from spraycv.refine.edges import MIN_EDGE_ROWS

sys.path.insert(0, str(Path(__file__).parent))
from pipeline_variants import SHOWN, Replay

NEAR_PX = 15.0  # an apex further than this from the reading's is not its nozzle's
TRIM_PX = 1.5  # edge points further off a pinned line are dropped before the last fit
FREE_SIDE_LINE = stage.side_line


def pinned_line(points: np.ndarray, apex: np.ndarray) -> LineFit | None:
    """A line through `apex` (2,) that fits `points` (N, 2) best (total least squares, then
    again without the points further off than the larger of TRIM_PX and their 80th
    percentile), directed away from the apex; None with too few points."""
    if len(points) < MIN_EDGE_ROWS:
        return None
    rel = points - apex
    keep = np.ones(len(rel), dtype=bool)
    for _ in range(2):
        _, vectors = np.linalg.eigh(rel[keep].T @ rel[keep])
        u = vectors[:, 1]
        off = np.abs(rel @ np.array([-u[1], u[0]]))
        keep = off <= max(TRIM_PX, float(np.percentile(off, 80)))
    if float(rel.mean(axis=0) @ u) < 0:
        u = -u
    rms = float(np.sqrt(np.mean(off**2)))
    return LineFit(apex.copy(), u, rms, len(points), int((off <= TRIM_PX).sum()))


def apex_source(mode: str, truth: np.ndarray, peaks: np.ndarray, frame: int) -> Callable:
    """The side-line function of a mode for one frame (truth, peaks: (K, 2) apexes)."""
    if mode == "free":
        return FREE_SIDE_LINE
    if mode == "own":
        return lambda points, apex: pinned_line(points, np.asarray(apex, dtype=float))
    name, _, sigma = mode.partition("+")
    ref = {"true": truth, "peak": peaks}[name]
    rng = np.random.default_rng(frame)
    noise = rng.normal(0.0, float(sigma or 0.0), ref.shape)  # one draw per apex and frame

    def side_line(points: np.ndarray, apex: np.ndarray) -> LineFit | None:
        dist = np.hypot(*(ref - np.asarray(apex, dtype=float)).T) if len(ref) else np.inf
        k = int(np.argmin(dist)) if len(ref) else -1
        if k < 0 or dist[k] > NEAR_PX:
            return FREE_SIDE_LINE(points, apex)
        return pinned_line(points, ref[k] + noise[k])

    return side_line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modes", nargs="+")
    ap.add_argument("--data", type=Path, default=Path("datasets/val_std"))
    ap.add_argument("--n", type=int, default=150)
    args = ap.parse_args()
    base = load_measurer(default_weights(), threads=1)
    frames = []
    for record in read_records(args.data)[: args.n]:
        image = read_image(args.data / record["image"])
        truth = to_binary_mask(read_image(args.data / record["mask"]))
        frames.append((record, image, truth, base.segmenter.segment([image])[0]))
    print(f"{args.data}, first {len(frames)} frames, the shipped model and refiner")
    print("| apex | " + " | ".join(SHOWN) + " |\n|---|" + "---|" * len(SHOWN))
    for mode in args.modes:
        report = EvalReport()
        for k, (record, image, truth, seg) in enumerate(frames):
            apexes = [nz["apex"] for nz in record["nozzles"] if nz.get("visible", True)]
            true_apexes = np.asarray(apexes, dtype=float).reshape(-1, 2)
            peaks = np.asarray(seg.apexes, dtype=float).reshape(-1, 2)
            stage.side_line = apex_source(mode, true_apexes, peaks, k)
            measurer = replace(base, segmenter=Replay({id(image): seg}))
            report.frames.append(evaluate_frame(record, image, truth, measurer)[0])
        stage.side_line = FREE_SIDE_LINE
        summary = report.summary()
        print(f"| {mode} | " + " | ".join(f"{summary[k]:.4g}" for k in SHOWN) + " |", flush=True)


if __name__ == "__main__":
    main()
