"""Variants of the pipeline after the model, side by side on the same masks.

The model segments each frame once (masks and apex-head peaks kept in memory); each variant
then re-reads those masks with other geometry settings or another refinement, so that the
rows differ only in what comes after the model. Every variant is evaluated end to end as
`spraycv eval` does (matching, missed and extra plumes, unreliable readings).

A variant is a comma-separated list of settings: `passes=N`, `flip=1`, `moved=FRAC/DEG`
(re-read only plumes whose pose moved more; `moved=0/0`: always), `band=FROM/TO` (the share
of the length the refiner reads the sides on), `apex_band=FROM/TO` (the
share of the length the refiner locates the apex on; `apex_band=none`: free side fits),
`apex_from=edges|channel|mean` (the apex the sides are pinned to, with a refiner
that has an apex channel), `refiner=PATH`, or any GeometryConfig field
(`apex_prior_px=10`, a nested one with a dot: `mask_shape.enabled=false`, the mask as
segmented; `none` sets None); `base` is the shipped pipeline.
`--by-style` adds, under each variant, its figures for each renderer style of the set (a
mixed set's weak look is otherwise lost in its mean).

Usage: python benchmarks/pipeline_variants.py --data datasets/val_std --n 300 \
           base passes=1 passes=2,flip=1 apex_prior_px=20
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.evaluation.heldout import EvalReport, evaluate_frame, read_records
from spraycv.io.images import read_image, to_binary_mask
from spraycv.measure import Measurer, load_measurer
from spraycv.paths import default_weights
from spraycv.refine.stage import Refiner
from spraycv.runtime.predictor import Segmentation

SHOWN = ("iou", "boundary_f1", "angle_mae_deg", "angle_median_deg", "angle_p95_deg",
         "frames_with_missed_frac", "frames_with_extra_frac", "unreliable_nozzles")  # fmt: skip


class Replay:
    """A segmenter that hands back the stored output of the frame it is given (by identity)."""

    has_apex_head = True
    name = "model (replayed)"

    def __init__(self, outputs: dict[int, Segmentation]):
        self.outputs = outputs

    def segment(self, images: list[np.ndarray]) -> list[Segmentation]:
        return [self.outputs[id(image)] for image in images]


def variant(base: Measurer, spec: str) -> Measurer:
    """The base pipeline with the settings of `spec` (see the module docstring)."""
    settings = dict(item.split("=", 1) for item in spec.split(",")) if spec != "base" else {}
    refiner = base.refiner
    if "refiner" in settings:
        refiner = Refiner.load(Path(settings.pop("refiner")), threads=1)
    if refiner is not None:
        moved = settings.pop("moved", None)
        apex_band = settings.pop("apex_band", None)
        band = settings.pop("band", None)
        refiner = Refiner(
            refiner.predictor,
            band=refiner.band if band is None else _band(band),
            flip=settings.pop("flip", "0") == "1",
            passes=int(settings.pop("passes", refiner.passes)),
            moved=refiner.moved if moved is None else tuple(map(float, moved.split("/"))),
            apex_band=_band(apex_band) if apex_band is not None else refiner.apex_band,
            apex_from=settings.pop("apex_from", refiner.apex_from),
        )
    fields: dict = {}
    for key, value in settings.items():
        *parents, name = key.split(".")
        node = fields
        for parent in parents:
            node = node.setdefault(parent, {})
        node[name] = {"true": True, "false": False, "none": None}.get(value.lower(), value)
    return replace(base, config=GeometryConfig.model_validate(fields), refiner=refiner)


def _band(spec: str) -> tuple[float, float] | None:
    """`FROM/TO` as a pair of shares of the length; `none` as None."""
    return None if spec == "none" else tuple(map(float, spec.split("/")))  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--data", type=Path, default=Path("datasets/val_std"))
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--weights", type=Path, default=None)
    ap.add_argument("--by-style", action="store_true", help="one more row per renderer style")
    args = ap.parse_args()
    base = load_measurer(args.weights or default_weights(), threads=1)
    frames = []
    for r in read_records(args.data)[: args.n]:
        truth = to_binary_mask(read_image(args.data / r["mask"]))
        frames.append((r, read_image(args.data / r["image"]), truth))
    outputs = {}
    for _, image, _ in frames:
        (seg,) = base.segmenter.segment([image])
        outputs[id(image)] = seg
    base = replace(base, segmenter=Replay(outputs))
    print(f"{args.data}, first {len(frames)} frames, weights {args.weights or 'shipped'}")
    print("| variant | seconds | " + " | ".join(SHOWN) + " |")
    print("|---|---|" + "---|" * len(SHOWN))
    for spec in args.variants:
        measurer, report, tic = variant(base, spec), EvalReport(), time.perf_counter()
        for record, image, truth in frames:
            report.frames.append(evaluate_frame(record, image, truth, measurer)[0])
        seconds = time.perf_counter() - tic
        rows = {"": report.summary()} | (report.by_style() if args.by_style else {})
        for style, summary in rows.items():
            cells = " | ".join("-" if summary[k] is None else f"{summary[k]:.4g}" for k in SHOWN)
            label = f"{spec} [{style}]" if style else spec
            print(f"| {label} | {seconds:.1f} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
