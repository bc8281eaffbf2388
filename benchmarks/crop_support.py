"""How the refiner's crop support (spraycv.refine.stage.crop_support) separates plumes from
readings made where nothing sprays: its quantiles on the readings matched to a true nozzle
and on the false ones, and what share of each a threshold would flag.

Usage: python benchmarks/crop_support.py --data datasets/val_std datasets/val_nospray \
           --refiner runs/refiner_neg/last.safetensors --n 300
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from spraycv.evaluation.heldout import read_records
from spraycv.geometry.cone import measure_cones
from spraycv.geometry.matching import match_to_truth
from spraycv.io.images import read_image
from spraycv.measure import load_measurer, segment_image, with_apex_prior
from spraycv.paths import default_weights
from spraycv.refine.stage import Refiner

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)


def supports(data: Path, n: int, measurer, refiner: Refiner) -> tuple[list[float], list[float]]:
    """(supports of readings matched to a true nozzle, supports of false readings)."""
    true, false = [], []
    for record in read_records(data)[:n]:
        image = read_image(data / record["image"])
        mask, apexes, strength = segment_image(measurer.segmenter, image)
        coarse = measure_cones(mask, hints=with_apex_prior(None, apexes, strength))
        refined, support = refiner.refine_with_support(image, coarse)
        match = match_to_truth(refined, record["nozzles"])
        true += [support[p.meas] for p in match.pairs]
        false += [support[i] for i in match.extra]
    return [s for s in true if math.isfinite(s)], [s for s in false if math.isfinite(s)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, nargs="+", required=True)
    ap.add_argument("--refiner", type=Path, default=None)
    ap.add_argument("--weights", type=Path, default=None)
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args()
    measurer = load_measurer(args.weights or default_weights(), threads=1)
    refiner = Refiner.load(args.refiner, threads=1) if args.refiner else measurer.refiner
    print(f"refiner {args.refiner or 'shipped'}; share flagged at support below: "
          + ", ".join(map(str, THRESHOLDS)))  # fmt: skip
    for data in args.data:
        true, false = supports(data, args.n, measurer, refiner)
        for name, values in (("plumes", true), ("false", false)):
            v = np.asarray(values)
            if not v.size:
                print(f"{data} {name}: none")
                continue
            q = np.percentile(v, (1, 5, 50, 95))
            flagged = " ".join(f"{(v < t).mean():.3f}" for t in THRESHOLDS)
            print(f"{data} {name} n={v.size}: p1 {q[0]:.2f} p5 {q[1]:.2f} median {q[2]:.2f} "
                  f"p95 {q[3]:.2f}; flagged {flagged}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
