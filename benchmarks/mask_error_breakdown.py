"""Where a model's mask IoU is lost on a rendered set (issue 13's IoU bound).

For the first N frames it prints, pooled over the frames (intersection and union summed, so
a frame counts by its area):
- the IoU at several probability thresholds (is the threshold the limit?);
- the ceiling of the model's input size: the true mask shrunk to it and enlarged again;
- the wrong pixels by their distance from the true boundary (a blurred edge loses pixels
  within 1-2 px; a misplaced one further out), and by where they lie along the nearest
  spraying nozzle's axis, as a share of its length (near the orifice, the band of the
  angle's definition, the far field, beyond the front), each as a share of the union.

Usage: python benchmarks/mask_error_breakdown.py --data datasets/heldout --n 100 [--weights W]
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from spraycv.evaluation.heldout import read_records
from spraycv.io.images import read_image, to_binary_mask
from spraycv.paths import default_weights
from spraycv.runtime.predictor import load_predictor
from spraycv.runtime.processing import preprocess, upsampled_mask

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)
DISTANCE_BINS = (0.0, 1.5, 3.0, 6.0, 12.0, np.inf)  # px from the true boundary
ALONG_BINS = (0.0, 0.1, 0.4, 0.8, 1.0, 1.3, np.inf)  # share of the nearest nozzle's length


def position_along(record: dict, shape: tuple[int, int]) -> np.ndarray:
    """(H, W) each pixel's distance along the axis of the spraying nozzle whose axis line
    lies nearest, as a share of its length (clipped to >= 0; inf where none sprays)."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    along, nearest = np.full(shape, np.inf), np.full(shape, np.inf)
    for nz in record["nozzles"]:
        if not nz.get("visible", True) or nz.get("length_px", 0) <= 0:
            continue
        (ax, ay), (ux, uy) = nz["apex"], nz["axis"]
        s, t = (xx - ax) * ux + (yy - ay) * uy, np.abs((yy - ay) * ux - (xx - ax) * uy)
        closer = t < nearest
        along[closer] = np.maximum(s[closer], 0.0) / nz["length_px"]
        nearest[closer] = t[closer]
    return along


def breakdown(logit: np.ndarray, truth: np.ndarray, record: dict, input_hw: Sequence[int]) -> dict:
    """One frame's counts: (intersection, union) per threshold and for the ceiling, and the
    wrong pixels (false positive, false negative) per distance bin and per position bin."""
    shape = truth.shape
    out = {}
    for t in THRESHOLDS:
        m = upsampled_mask(logit, shape, float(np.log(t / (1 - t)))).astype(bool)
        out[t] = np.array([(m & truth).sum(), (m | truth).sum()])
    small = cv2.resize(truth.astype(np.float32), input_hw[::-1], interpolation=cv2.INTER_AREA)
    up = cv2.resize(small, shape[::-1], interpolation=cv2.INTER_LINEAR) > 0.5
    out["ceiling"] = np.array([(up & truth).sum(), (up | truth).sum()])
    pred = upsampled_mask(logit, shape, 0.0).astype(bool)
    fp, fn = pred & ~truth, truth & ~pred
    outside = cv2.distanceTransform((~truth).astype(np.uint8), cv2.DIST_L2, 5)
    inside = cv2.distanceTransform(truth.astype(np.uint8), cv2.DIST_L2, 5)
    along = position_along(record, shape)
    out["distance"] = np.stack(
        [np.histogram(outside[fp], DISTANCE_BINS)[0], np.histogram(inside[fn], DISTANCE_BINS)[0]]
    )
    out["along"] = np.stack(
        [np.histogram(along[fp], ALONG_BINS)[0], np.histogram(along[fn], ALONG_BINS)[0]]
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--weights", type=Path, default=None)
    args = ap.parse_args()
    predictor = load_predictor(args.weights or default_weights(), threads=1)
    total: dict = {}
    for record in read_records(args.data)[: args.n]:
        image = read_image(args.data / record["image"])
        truth = to_binary_mask(read_image(args.data / record["mask"])).astype(bool)
        logit = predictor.infer(preprocess([image], predictor.io))[0, 0].astype(np.float32)
        for key, value in breakdown(logit, truth, record, predictor.io.input_size).items():
            total[key] = total.get(key, 0) + value
    union = total[0.5][1]
    print(f"{args.data}, first {args.n} frames, weights {args.weights or 'shipped'} (pooled)")
    for t in THRESHOLDS:
        print(f"IoU at threshold {t}: {total[t][0] / total[t][1]:.4f}")
    size = "x".join(map(str, predictor.io.input_size))
    ceiling = total["ceiling"][0] / total["ceiling"][1]
    print(f"ceiling (the true mask through {size}): {ceiling:.4f}")
    for name, bins in (("distance", DISTANCE_BINS), ("along", ALONG_BINS)):
        edges = [f"{lo:g}-{hi:g}" for lo, hi in itertools.pairwise(bins)]
        print(f"wrong pixels by {name} ({', '.join(edges)}), share of the union:")
        for label, row in zip(("false positive", "false negative"), total[name], strict=True):
            print(f"  {label}: " + " ".join(f"{v / union:.4f}" for v in row))


if __name__ == "__main__":
    main()
