"""How reading and normalising the exposure changes the end-to-end figures of one model.

Side by side on the same frames: 16-bit files read by their top 8 bits (what OpenCV does
without IMREAD_ANYDEPTH, spraycv before issue 15) or by the percentile stretch
(spraycv.io.exposure.to_uint8); and the model's inputs as they are or stretched
(`normalization.exposure`, overridden here whatever the model's sidecar says).

Usage: python benchmarks/exposure_probe.py --data datasets/heldout_dim --n 100 [--weights W]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from spraycv.evaluation.heldout import EvalReport, evaluate_frame, read_records
from spraycv.io.exposure import Exposure
from spraycv.io.images import read_image, to_binary_mask
from spraycv.measure import load_measurer
from spraycv.paths import default_weights

SHOWN = ("iou", "angle_mae_deg", "angle_median_deg", "frames_with_missed_frac",
         "frames_with_extra_frac")  # fmt: skip


def read_top_byte(path: Path) -> np.ndarray:
    """A file read as OpenCV reads it by default: 16-bit data reduced to its top 8 bits."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    if image is None:
        raise ValueError(f"{path}: not readable")
    return image


READERS = {"top byte": read_top_byte, "stretch": read_image}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout_dim"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--weights", type=Path, default=None)
    args = ap.parse_args()
    measurer = load_measurer(args.weights or default_weights(), threads=1)
    predictor = measurer.segmenter
    records = read_records(args.data)[: args.n]
    print(f"{args.data}, first {len(records)} frames, weights {args.weights or 'shipped'}")
    print("| 16-bit read | model input | " + " | ".join(SHOWN) + " |")
    print("|---|---|" + "---|" * len(SHOWN))
    for read_name, read in READERS.items():
        for mode in ("none", "stretch"):
            predictor.io = replace(predictor.io, exposure=Exposure(mode=mode))
            report = EvalReport()
            for r in records:
                truth = to_binary_mask(read_image(args.data / r["mask"]))
                image = read(args.data / r["image"])
                report.frames.append(evaluate_frame(r, image, truth, measurer)[0])
            summary = report.summary()
            cells = " | ".join(f"{summary[k]:.4g}" for k in SHOWN)
            print(f"| {read_name} | {mode} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
