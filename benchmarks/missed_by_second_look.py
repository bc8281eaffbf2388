"""Were a set's missed nozzles in frames the second look read again? (experiments row 89)

For every frame of a `spraycv eval` run with a missed nozzle, the model's first pass is run
again and `spraycv.runtime.zoom.zoom_box` asked whether the second look would read a square
of it again: a line per frame (its nozzles, missed ones, the first pass's extent as a share
of the shorter side, its apex peaks), then the totals for frames read again and not.

Usage: python benchmarks/missed_by_second_look.py --data datasets/heldout_small \
           --frames runs/eval/S24_heldout_small/frames.jsonl [--weights weights/default.onnx]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from spraycv.evaluation.heldout import read_records
from spraycv.io.images import read_image
from spraycv.paths import default_weights
from spraycv.runtime.predictor import load_predictor
from spraycv.runtime.zoom import zoom_box


def extent_share(mask: np.ndarray) -> float:
    """The mask's larger side of its bounding box over the frame's shorter side (0: empty)."""
    ys, xs = np.nonzero(mask)
    if not len(ys):
        return 0.0
    return max(int(np.ptp(ys)), int(np.ptp(xs))) / min(mask.shape)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--frames", type=Path, required=True, help="frames.jsonl of `spraycv eval`")
    ap.add_argument("--weights", type=Path, default=None)
    args = ap.parse_args()
    predictor = load_predictor(args.weights or default_weights(), threads=1)
    images = {r["id"]: r["image"] for r in read_records(args.data)}
    totals = {"read again": [0, 0], "not read again": [0, 0]}  # frames, nozzles missed
    for line in args.frames.read_text().splitlines():
        frame = json.loads(line)
        if not frame["missed"]:
            continue
        image = read_image(args.data / images[frame["id"]])
        (first,) = predictor._one_pass([image], True)  # the first pass alone
        zoomed = zoom_box(first.mask, predictor.io.zoom_below) is not None
        key = "read again" if zoomed else "not read again"
        totals[key][0] += 1
        totals[key][1] += frame["missed"]
        print(
            f"{frame['id']}: {frame['missed']} of {frame['n_truth']} missed, {key}, "
            f"extent {extent_share(first.mask):.2f}, {len(first.apexes)} apex peaks"
        )
    for key, (frames, missed) in totals.items():
        print(f"{key}: {frames} frames, {missed} nozzles missed")


if __name__ == "__main__":
    main()
