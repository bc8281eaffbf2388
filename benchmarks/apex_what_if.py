"""What another apex would buy: the refiner's two side lines fitted through a given apex
(issue 13's median and p95 bounds; docs/experiments.md, rows 64 and 66).

The shipped pipeline reads each plume's sides on its canonical crop and fits them through
the apex where the sides of the near-orifice band meet (`spraycv.refine.edges.side_lines`).
Here the apex is taken from elsewhere, by mode:
- `near`: the shipped fit (the baseline; with the shipped refiner's apex channel, the mean
  of the edges' apex and the channel's, experiments row 115);
- `free`: each side fitted freely, the apex where they meet (the pipeline before row 66);
- `true`: the true apex of the nearest nozzle (within 15 px of the crop's; else free);
- `true+S`: that apex moved by Gaussian noise of S px per axis (seeded per frame);
- `peak`: the nearest apex-head peak (within 15 px; else free);
- `own`: the reading's apex before the crop was read.
Every mode is read end to end on the same masks (benchmarks/pipeline_variants.py's replay).
A what-if: the mode's fit replaces `spraycv.refine.stage.side_lines` for the run only (the
apex channel's reading, which the stage passes on, is then ignored).

Usage: python benchmarks/apex_what_if.py --data datasets/val_std --n 150 near free true peak
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
from spraycv.io.images import read_image, to_binary_mask
from spraycv.measure import load_measurer
from spraycv.paths import default_weights
from spraycv.refine.edges import crop_apex, crop_edges, pinned_line

sys.path.insert(0, str(Path(__file__).parent))
from pipeline_variants import SHOWN, Replay

NEAR_PX = 15.0  # an apex further than this from the crop's is not its nozzle's
SHIPPED_SIDE_LINES = stage.side_lines


def _free(prob, transform, band, apex_band=None, *channel):
    return SHIPPED_SIDE_LINES(prob, transform, band, None)


def _pinned_at(apex: np.ndarray) -> Callable:
    def side_lines(prob, transform, band, apex_band=None, *channel):
        edges = crop_edges(prob, transform, band)
        return pinned_line(edges.left, apex), pinned_line(edges.right, apex)

    return side_lines


FIXED_MODES = {"near": SHIPPED_SIDE_LINES, "free": _free}  # modes that need no reference apex


def apex_source(mode: str, truth: np.ndarray, peaks: np.ndarray, frame: int) -> Callable:
    """The side-lines function of a mode for one frame (truth, peaks: (K, 2) apexes)."""
    if mode in FIXED_MODES:
        return FIXED_MODES[mode]
    if mode == "own":
        return lambda prob, t, band, apex_band=None, *channel: _pinned_at(crop_apex(prob.shape, t))(
            prob, t, band
        )
    name, _, sigma = mode.partition("+")
    ref = {"true": truth, "peak": peaks}[name]
    rng = np.random.default_rng(frame)
    noise = rng.normal(0.0, float(sigma or 0.0), ref.shape)  # one draw per apex and frame

    def side_lines(prob, transform, band, apex_band=None, *channel):
        own = crop_apex(prob.shape, transform)
        dist = np.hypot(*(ref - own).T) if len(ref) else np.inf
        k = int(np.argmin(dist)) if len(ref) else -1
        if k < 0 or dist[k] > NEAR_PX:
            return _free(prob, transform, band)
        return _pinned_at(ref[k] + noise[k])(prob, transform, band)

    return side_lines


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
            stage.side_lines = apex_source(mode, true_apexes, peaks, k)
            measurer = replace(base, segmenter=Replay({id(image): seg}))
            report.frames.append(evaluate_frame(record, image, truth, measurer)[0])
        stage.side_lines = SHIPPED_SIDE_LINES
        summary = report.summary()
        print(f"| {mode} | " + " | ".join(f"{summary[k]:.4g}" for k in SHOWN) + " |", flush=True)


if __name__ == "__main__":
    main()
