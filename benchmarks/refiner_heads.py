"""The refiner's mask head and fine apex correction run apart or as one convolution, side by
side in one run: the end-to-end pipeline (model, geometry, refiner) with each form of the
refiner, in FP32 and INT8.

ONNX Runtime's blocked (NCHWc) layout pads a one-channel convolution's output to 16 channels,
so the refiner's two one-channel convolutions over its 128 px crops cost about twice one
two-channel convolution (spraycv.models.apex_head.WithApexHead._mask_and_fine). Both forms
are exported here from one checkpoint with the same INT8 recipe as the shipped export, and
give the same FP32 logits.

Usage: python benchmarks/refiner_heads.py --model M.int8.onnx --refiner M.refiner.safetensors
       (`spraycv export -f onnx-int8` writes the model's file)
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
from pathlib import Path

import numpy as np
from torch import nn

from spraycv.export.onnx_export import export_onnx
from spraycv.export.parity import CALIB_SEED0, model_inputs
from spraycv.export.quantize import QuantOptions, quantize_onnx
from spraycv.refine.stage import Refiner
from spraycv.runtime.bench import encoded_frames, format_table, run_bench
from spraycv.runtime.onnx_backend import OnnxPredictor
from spraycv.runtime.processing import ModelIO
from spraycv.training.checkpoint import load_checkpoint

RECIPE = QuantOptions(calibrate_method="Percentile", float_head=12, float_tail=7)
FRAMES, NOZZLES, SIZE = 40, 3, 512  # the acceptance bench's frames (issue 13)


def apart(model: nn.Module) -> nn.Module:
    """A copy whose segmentation head is not a bare convolution (the same arithmetic), so
    that it runs apart from the fine correction."""
    copied = copy.deepcopy(model)
    head = copied.net.segmentation_head
    head[0] = nn.Sequential(head[0])
    return copied


def refiner_files(weights: Path, tmp: Path) -> dict[str, Path]:
    """FP32 and INT8 ONNX files of the refiner in both forms, by label."""
    model, meta = load_checkpoint(weights)
    size = int(meta["input_size"][0])
    calib = model_inputs(meta, 32, size, CALIB_SEED0)
    files = {}
    for form, net in (("apart", apart(model)), ("one conv", model)):
        fp32 = export_onnx(net, meta, tmp / f"{form}.onnx").path
        files[f"{form} fp32"] = fp32
        files[f"{form} int8"] = quantize_onnx(
            fp32, tmp / f"{form}.int8.onnx", calib, ModelIO.from_sidecar(meta), RECIPE
        )
    return files


def same_logits(files: dict[str, Path], size: int) -> float:
    """Largest FP32 logit difference between the two forms on three random crops."""
    x = np.random.default_rng(0).random((3, 3, size, size), dtype=np.float32)
    a, b = (OnnxPredictor(files[f"{form} fp32"], "cpu").infer(x) for form in ("apart", "one conv"))
    return float(np.abs(a - b).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--refiner", type=Path, required=True, help="its .safetensors")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = refiner_files(args.refiner, Path(tmp))
        diff = same_logits(files, int(load_checkpoint(args.refiner)[1]["input_size"][0]))
        model = OnnxPredictor(args.model, "cpu")
        refiners = {label: Refiner(OnnxPredictor(path, "cpu")) for label, path in files.items()}
        frames = encoded_frames(FRAMES, SIZE, SIZE, nozzles=NOZZLES)
        timings = run_bench(dict.fromkeys(refiners, model), frames, refiners=refiners)
    print(
        f"{FRAMES} frames {SIZE}x{SIZE}, {NOZZLES} nozzles, "
        f"load average {os.getloadavg()[0]:.2f}; FP32 logits of the two forms differ by "
        f"at most {diff:.2e}"
    )
    print(format_table(timings))


if __name__ == "__main__":
    main()
