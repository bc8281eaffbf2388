"""Cost of the geometry on the shipped model's own masks and apex peaks: ms per frame.

The frames are segmented once; then `Measurer.coarse_readings` (the geometry with the apex
prior, before the refiner) reads every frame, `--passes` times, and the median of each pass
is printed: the spread of the passes is the machine's noise. Frames: the bench's own
(`--bench N`: N rendered 512 x 512 frames with three spraying nozzles, as `spraycv bench`
renders them) or the first `--n` frames of a rendered folder (`--data`).

To compare two versions of the code on the same masks, run it from each checkout in turn
(e.g. `git worktree add /tmp/before COMMIT`, then `PYTHONPATH=/tmp/before python
benchmarks/geometry_on_model_masks.py --bench 40` and the same without PYTHONPATH), with
nothing else running.

Usage: python benchmarks/geometry_on_model_masks.py [--bench 40 | --data DIR --n 100]
           [--weights W] [--passes 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np

from spraycv.evaluation.heldout import read_records
from spraycv.io.images import read_image
from spraycv.measure import load_measurer, segment_image
from spraycv.paths import default_weights
from spraycv.runtime.bench import encoded_frames


def frames(args: argparse.Namespace) -> list[np.ndarray]:
    """The frames to read, decoded."""
    if args.data is None:
        data = encoded_frames(args.bench, 512, 512, nozzles=3)
        return [cv2.imdecode(np.frombuffer(d, np.uint8), cv2.IMREAD_COLOR) for d in data]
    return [read_image(args.data / r["image"]) for r in read_records(args.data)[: args.n]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=int, default=40)
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--weights", type=Path, default=None)
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    measurer = load_measurer(args.weights or default_weights(), threads=1)
    # segment_image's outputs (mask, apexes[, heat]) go to coarse_readings as they are, so
    # that the same script times an older checkout too
    segmented = [segment_image(measurer.segmenter, image) for image in frames(args)]
    medians = []
    for _ in range(args.passes):
        seconds = []
        for outputs in segmented:
            tic = time.perf_counter()
            measurer.coarse_readings(*outputs)
            seconds.append(time.perf_counter() - tic)
        medians.append(1000.0 * float(np.median(seconds)))
    source = args.data or f"{args.bench} bench frames"
    print(
        f"{source}: geometry median per frame, each pass: "
        + ", ".join(f"{m:.1f} ms" for m in medians)
    )


if __name__ == "__main__":
    main()
