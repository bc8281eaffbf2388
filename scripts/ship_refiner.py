"""Ship a trained refiner beside the default model: weights/default.refiner.safetensors (fp16),
and again the FP32 ONNX export of both (weights/default.onnx, default.refiner.onnx).

The loader finds it there (spraycv.formats.refiner_companion), so every path that loads the
shipped model (predict, measure, the daemon, the dashboard, bench, eval) then refines. Ship
one only when `spraycv eval --refiner R` beats the shipped pipeline on the held-out sets
(docs/experiments.md); the figures given here go into its sidecar.

Usage:
    python scripts/ship_refiner.py runs/refiner/best.safetensors --metrics FILE [FILE ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spraycv.export.exporter import export_shipped
from spraycv.formats import refiner_companion
from spraycv.paths import default_checkpoint
from spraycv.training.checkpoint import SHIPPED_DTYPE, load_checkpoint, save_checkpoint


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights", type=Path)
    ap.add_argument("--metrics", type=Path, nargs="*", default=[], help="eval metrics.json")
    args = ap.parse_args()
    model, meta = load_checkpoint(args.weights)
    meta.pop("encoder_converted_from", None)
    evaluated = {str(p.parent.name): json.loads(p.read_text()) for p in args.metrics}
    sidecar = {**meta, "shipped_from": str(args.weights), "heldout_figures": evaluated}
    out = refiner_companion(default_checkpoint())
    save_checkpoint(out, model, sidecar, dtype=SHIPPED_DTYPE)
    print(f"shipped {args.weights} (step {meta.get('step')}) -> {out}")
    export_shipped()  # the default ONNX pipeline gets the new refiner too


if __name__ == "__main__":
    main()
