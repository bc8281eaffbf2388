"""What redrawing the mask from the readings costs (spraycv.geometry.plume_shape).

The shipped pipeline reads the first N frames of a rendered set once, with the redraw off;
then, interleaved over R rounds on the same masks and readings, it times the redraw and the
rest of the pipeline after the model (`Measurer.finish_reading` without the redraw), so that
both see the same machine. Prints medians per frame, in ms, and the redraw's share.

Usage: python benchmarks/plume_shape_speed.py --data datasets/heldout --n 50 --rounds 5
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from spraycv.config.geometry import GeometryConfig, MaskShapeConfig
from spraycv.evaluation.heldout import read_records
from spraycv.geometry.plume_shape import shaped_mask
from spraycv.io.images import read_image
from spraycv.measure import load_measurer, segment_image
from spraycv.paths import default_weights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout"))
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--weights", type=Path, default=None)
    args = ap.parse_args()
    off = GeometryConfig(mask_shape=MaskShapeConfig(enabled=False))
    measurer = load_measurer(args.weights or default_weights(), config=off, threads=1)
    frames = []
    for record in read_records(args.data)[: args.n]:
        image = read_image(args.data / record["image"])
        mask, apexes, strength = segment_image(measurer.segmenter, image)
        coarse = measurer.coarse_readings(mask, apexes, strength)
        frames.append((image, mask, apexes, coarse))
    shape_config = MaskShapeConfig()
    redraw, rest = [], []
    for _ in range(args.rounds):
        for image, mask, apexes, coarse in frames:
            tic = time.perf_counter()
            reading = measurer.finish_reading(mask, apexes, image, coarse)
            rest.append(time.perf_counter() - tic)
            tic = time.perf_counter()
            shaped_mask(mask, reading.measurements, shape_config)
            redraw.append(time.perf_counter() - tic)
    plumes = np.mean([len(c) for *_, c in frames])
    a, b = 1000 * np.median(redraw), 1000 * np.median(rest)
    print(
        f"{args.data}, {len(frames)} frames ({plumes:.1f} coarse plumes each), {args.rounds} rounds"
    )
    print(f"redraw {a:.2f} ms a frame; the refiner, confidence and recovery {b:.2f} ms")
    print(f"the redraw adds {100 * a / b:.1f} % to the pipeline after the model")


if __name__ == "__main__":
    main()
