"""What a frame whose sprays point sideways or up costs (experiments row 167): a bundled
sample read upright and turned by 1-3 quarter turns, side by side in one run, through the
shipped pipeline (one thread). A turned frame is read twice: the first look finds its
plumes pointing another way, and the network looks again turned (`Measurer.with_turn`).

Usage: python benchmarks/turned_frames.py [--sample 000002] [--rounds 7]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np

from spraycv.measure import load_measurer
from spraycv.paths import default_weights

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", default="000002")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    measurer = load_measurer(default_weights(), threads=1)
    image = cv2.imread(str(REPO / "data/samples/images" / f"{args.sample}.jpg"))
    frames = {k: np.ascontiguousarray(np.rot90(image, k)) for k in range(4)}
    times: dict[int, list[float]] = {k: [] for k in frames}
    for frame in frames.values():
        measurer(frame)  # warm-up
    for _ in range(args.rounds):  # interleaved: the machine's drift hits every turn alike
        for k, frame in frames.items():
            tic = time.perf_counter()
            reading = measurer(frame)
            times[k].append(time.perf_counter() - tic)
    print(f"sample {args.sample}, {args.rounds} rounds, one thread; ms, median")
    print("| quarter turns | ms | x upright | trusted plumes |")
    print("|---|---|---|---|")
    base = float(np.median(times[0]))
    for k, frame in frames.items():
        reading = measurer(frame)
        trusted = sum(m.reliable for m in reading.measurements)
        ms = float(np.median(times[k]))
        print(f"| {k} | {1000 * ms:.1f} | {ms / base:.2f} | {trusted} |")


if __name__ == "__main__":
    main()
