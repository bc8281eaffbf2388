"""The pipeline end to end with its network read at several input sizes, side by side in one
run: what a larger input (issue 13's lever d; experiments row 217) costs a frame.

One exported file serves every size (its input height and width are dynamic); each label
is a predictor of that file whose input size is replaced, with the same refiner beside it.

Usage: python benchmarks/input_size_speed.py --model M.int8.onnx --refiner M.int8.refiner.onnx
       [--sizes 256 320] (export both with `spraycv export -f onnx-int8`)
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from spraycv.refine.stage import Refiner
from spraycv.runtime.bench import side_by_side
from spraycv.runtime.onnx_backend import OnnxPredictor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--refiner", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 320])
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--nozzles", type=int, default=3)
    parser.add_argument("--size", type=int, default=512, help="frame side, px")
    args = parser.parse_args()
    if any(n % 32 for n in args.sizes):
        parser.error(f"--sizes must be multiples of 32 (the network's stride), got {args.sizes}")
    predictors, refiners = {}, {}
    for n in args.sizes:
        label = f"input {n} px"
        predictor = OnnxPredictor(args.model, "cpu")
        predictor.io = dataclasses.replace(predictor.io, input_size=(n, n))
        predictors[label] = predictor
        refiners[label] = Refiner(OnnxPredictor(args.refiner, "cpu"))
    print(side_by_side(predictors, refiners, args.frames, args.size, args.nozzles))


if __name__ == "__main__":
    main()
