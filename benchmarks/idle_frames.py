"""What a frame without spray costs the pipeline, with and without the search for sprays
the first look missed.

A frame in which the first look finds nothing is searched: the tiled look (far views' sprays
may show only there) and the quarter-turned looks (a spray seen side-on); a daemon whose
camera is idle skips them (spraycv.stream.idle). This times both on the same frames,
interleaved, one thread, and the same on frames with spray for comparison (experiments rows
164 and 174).

Usage: python benchmarks/idle_frames.py --idle datasets/heldout_nospray \
           --spray datasets/heldout --n 40 [--weights W]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from spraycv.io.images import read_image
from spraycv.measure import Measurer, load_measurer
from spraycv.paths import default_weights


def frames(folder: Path, n: int) -> list[np.ndarray]:
    """The first n images of a rendered set (labels.jsonl order)."""
    lines = (folder / "labels.jsonl").read_text().splitlines()[:n]
    return [read_image(folder / json.loads(line)["image"]) for line in lines]


def median_ms(measurers: dict[str, Measurer], images: list[np.ndarray]) -> dict[str, float]:
    """Each measurer's median milliseconds a frame, the measurers interleaved frame by frame."""
    times: dict[str, list[float]] = {name: [] for name in measurers}
    for image in images:
        for name, measurer in measurers.items():
            tic = time.perf_counter()
            measurer(image)
            times[name].append(1000 * (time.perf_counter() - tic))
    return {name: float(np.median(t)) for name, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=Path, required=True)
    ap.add_argument("--spray", type=Path, required=True)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--weights", type=Path, default=None)
    args = ap.parse_args()
    searched = load_measurer(args.weights or default_weights(), threads=1)
    measurers = {
        "searched": searched,
        "not searched": replace(searched, search_when_nothing_seen=False),
    }
    for name, folder in (("without spray", args.idle), ("with spray", args.spray)):
        images = frames(folder, args.n)
        searched(images[0])  # warm up
        ms = median_ms(measurers, images)
        cells = ", ".join(f"{k} {v:.1f} ms" for k, v in ms.items())
        print(f"{name} ({folder}, {len(images)} frames, one thread): {cells}")


if __name__ == "__main__":
    main()
