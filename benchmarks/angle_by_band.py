"""The included-angle error by band of the spray length, end to end, for any weights.

The cone angle is defined on 10-40 % of the length; the model's masks are least sharp next
to the orifice. Each band re-reads the same frames with the boundaries fitted in that band
only (GeometryConfig.band, and the refiner's band when one is given), against the truth
mask read the same way (the floor of the geometry).

Usage: python benchmarks/angle_by_band.py --data datasets/heldout --n 150 \
           [--weights W] [--refiner R]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from spraycv.config.geometry import BandConfig, GeometryConfig
from spraycv.evaluation.heldout import read_records
from spraycv.geometry.matching import angle_errors, match_to_truth
from spraycv.io.images import read_image, to_binary_mask
from spraycv.measure import Measurer
from spraycv.paths import default_weights
from spraycv.refine.pose import S_END_FRAC
from spraycv.runtime.predictor import load_predictor

BANDS = ((0.05, 0.2), (0.1, 0.4), (0.2, 0.6), (0.4, 0.8))


def band_errors(measurer: Measurer, frames: list, use_truth_mask: bool) -> np.ndarray:
    """(M,) absolute included-angle errors of every matched nozzle."""
    errors = []
    for record, image, truth_mask in frames:
        reading = measurer.read_mask(truth_mask) if use_truth_mask else measurer(image)
        match = match_to_truth(reading.measurements, record["nozzles"])
        for pair in match.pairs:
            err = angle_errors(reading.measurements[pair.meas], record["nozzles"][pair.gt])
            errors.append(abs(err["included"]))
    arr = np.asarray(errors, dtype=float)
    return arr[np.isfinite(arr)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout"))
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--weights", type=Path, default=None)
    ap.add_argument("--refiner", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    predictor = load_predictor(args.weights or default_weights(), threads=args.threads)
    refiner = None
    if args.refiner is not None:
        from spraycv.refine.stage import Refiner

        refiner = Refiner.load(args.refiner, threads=args.threads)
    frames = [
        (r, read_image(args.data / r["image"]), to_binary_mask(read_image(args.data / r["mask"])))
        for r in read_records(args.data)[: args.n]
    ]
    print(f"{args.data}, first {len(frames)} frames; weights {args.weights or 'shipped'}, "
          f"refiner {args.refiner}")  # fmt: skip
    print("| band (share of L) | model MAE | model median | true-mask MAE |")
    print("|---|---|---|---|")
    for lo, hi in BANDS:
        config = GeometryConfig(band=BandConfig(start_frac=lo, end_frac=hi))
        refine = refiner if refiner is not None and hi <= S_END_FRAC else None  # crop's reach
        if refine is not None:
            refine.band = (lo, hi)
        model = band_errors(Measurer(predictor, config=config, refiner=refine), frames, False)
        floor = band_errors(Measurer(predictor, config=config), frames, True)
        print(f"| {lo:.0%}-{hi:.0%} | {model.mean():.2f} | {np.median(model):.2f} "
              f"| {floor.mean():.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
