"""Why nozzles are missed: one line per true nozzle that no reading matches.

Each frame of a rendered folder is read end to end by the shipped pipeline (or `--weights`
with the refiner beside it). For every visible true nozzle left unmatched it prints a JSON
line: the frame, its style, the nozzle's type, state, included angle and length, how far the
nearest apex-head peak lies from its apex (and the matching limit), how much of its
instance the mask covers, and the two nearest readings (distance, unreliable reason,
included angle, flags). A peak within a few px and a mask that covers the plume point at the
geometry; no peak at the apex head; a low cover at the mask (docs/experiments.md, row 51).

Usage: python benchmarks/missed_nozzles.py --data datasets/heldout_hard [--n 200] [--weights W]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import cv2
import numpy as np

from spraycv.data.synth.styles import frame_style
from spraycv.evaluation.heldout import read_records
from spraycv.geometry.matching import match_to_truth
from spraycv.geometry.tuning import TUNING
from spraycv.io.images import read_image
from spraycv.measure import Reading, load_measurer
from spraycv.paths import default_weights


def missed_rows(record: dict, reading: Reading, instances: np.ndarray | None) -> list[dict]:
    """One row per true nozzle of `record` that no reading of `reading` matches."""
    rows = []
    peaks = np.zeros((0, 2)) if reading.apexes is None else np.asarray(reading.apexes)
    located = [m for m in reading.measurements if np.isfinite(m.apex).all()]
    for g in match_to_truth(reading.measurements, record["nozzles"]).missed:
        nozzle = record["nozzles"][g]
        apex = np.asarray(nozzle["apex"], dtype=float)
        region = None if instances is None else instances == g + 1
        cover = math.nan if region is None or not region.any() else reading.mask[region].mean()
        nearest = sorted(located, key=lambda m: math.dist(m.apex, apex))[:2]
        rows.append({
            "id": record["id"], "style": frame_style(record), "type": nozzle["nozzle_type"],
            "state": nozzle["state"], "included_deg": round(nozzle["included_angle_deg"], 1),
            "length_px": round(nozzle["length_px"]), "nozzles": len(record["nozzles"]),
            "peak_px": round(min((math.dist(p, apex) for p in peaks), default=math.inf), 1),
            "limit_px": round(max(TUNING.match_min_px, TUNING.match_frac * nozzle["length_px"]), 1),
            "mask_cover": round(float(cover), 2),
            "nearest": [
                (round(math.dist(m.apex, apex), 1), m.unreliable, round(m.included_angle_deg, 1),
                 [f.value for f in m.flags])
                for m in nearest
            ],
        })  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--weights", type=Path, default=None)
    args = ap.parse_args()
    measurer = load_measurer(args.weights or default_weights(), threads=1)
    records = read_records(args.data)[: args.n]
    total = 0
    for record in records:
        path = args.data / record.get("instances", f"instances/{record['id']}.png")
        instances = cv2.imread(str(path), cv2.IMREAD_UNCHANGED) if path.is_file() else None
        for row in missed_rows(
            record, measurer(read_image(args.data / record["image"])), instances
        ):
            print(json.dumps(row), flush=True)
            total += 1
    print(f"{total} missed nozzles in {len(records)} frames")


if __name__ == "__main__":
    main()
