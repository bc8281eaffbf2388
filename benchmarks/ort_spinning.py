"""ONNX Runtime with and without spinning threads, side by side in one run: the end-to-end
pipeline (model, geometry, refiner) of exported files, each backend with its refiner.

The model's and the refiner's sessions alternate with the geometry on the same cores; a
session whose idle threads spin takes CPU from the next stage.

Usage: python benchmarks/ort_spinning.py --model M.int8.onnx --refiner M.int8.refiner.onnx
       (export both with `spraycv export -f onnx-int8`; the refiner's file beside the model's)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spraycv.refine.stage import Refiner
from spraycv.runtime.bench import side_by_side
from spraycv.runtime.onnx_backend import OnnxPredictor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--refiner", type=Path, required=True)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--nozzles", type=int, default=3)
    parser.add_argument("--size", type=int, default=512)
    args = parser.parse_args()
    predictors, refiners = {}, {}
    for label, spin in (("spinning", True), ("not spinning", False)):
        predictors[label] = OnnxPredictor(args.model, "cpu", spin=spin)
        refiners[label] = Refiner(OnnxPredictor(args.refiner, "cpu", spin=spin))
    print(side_by_side(predictors, refiners, args.frames, args.size, args.nozzles))


if __name__ == "__main__":
    main()
