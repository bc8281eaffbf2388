"""Where the missed nozzles are, by how bright each frame is (experiments row 77).

For each frame of a rendered set, its bright level (`spraycv.io.exposure.bright_level`: the
99.8th percentile of its brightest channel) beside the nozzles an evaluation missed
(`spraycv eval --out DIR` writes DIR/frames.jsonl): how many frames, nozzles and misses lie
below each threshold, and how many above. It backs the under-exposure warning's threshold.

Usage:
    python benchmarks/misses_by_exposure.py --data datasets/heldout_dim \
        --eval runs/eval/S18_heldout_dim/frames.jsonl [--below 32 48 64]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from spraycv.evaluation.heldout import read_records
from spraycv.io.exposure import bright_level
from spraycv.io.images import read_image


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--eval", type=Path, required=True, help="frames.jsonl of `spraycv eval`")
    ap.add_argument("--below", type=float, nargs="+", default=[32.0, 48.0, 64.0])
    args = ap.parse_args()
    frames = {r["id"]: r for r in map(json.loads, args.eval.read_text().splitlines())}
    rows = []
    for record in read_records(args.data):
        result = frames.get(str(record["id"]))
        if result is None:
            continue
        level = bright_level(read_image(args.data / record["image"]))
        rows.append((level, result["missed"], result["n_truth"]))
    level, missed, nozzles = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
    print(f"{args.data}: {len(rows)} frames, {int(missed.sum())} of {int(nozzles.sum())} "
          "nozzles missed")  # fmt: skip
    print("| below | frames | nozzles | missed | missed above |")
    print("|---|---|---|---|---|")
    for cut in args.below:
        dark = level < cut
        print(f"| {cut:g} | {int(dark.sum())} | {int(nozzles[dark].sum())} | "
              f"{int(missed[dark].sum())} | {int(missed[~dark].sum())} of "
              f"{int(nozzles[~dark].sum())} |")  # fmt: skip


if __name__ == "__main__":
    main()
