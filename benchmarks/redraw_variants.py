"""Is any of the held-out IoU lost in how the mask is redrawn from the readings?

Each frame is read once by the shipped pipeline, keeping what its final reading handed to the
redraw (`spraycv.geometry.plume_shape.shaped_mask`: the segmented mask and the readings);
the mask is then redrawn with other settings and scored as `spraycv eval` scores it (the
IoU of each frame against its rendered truth, averaged over the frames; `shipped` reads a
little below `spraycv eval` where a frame took plumes from its tiles). A variant that
beats `shipped` would be a cheaper lever than the network (docs/experiments.md, row 179):

- `widen D`: the wedge drawn D deg wider on each side (a bias in where the sides go);
- `window N`, `edge_frac F`: the front's median window and the share of rays held out to it;
- `drop unclaimed`: segmented components that no reading's axis runs through removed;
- `no redraw`: the segmented mask as it is.

Usage: python benchmarks/redraw_variants.py --data datasets/heldout --n 400 [--weights W]
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

import spraycv.measure as measure_module
from spraycv.config.geometry import MaskShapeConfig
from spraycv.evaluation.heldout import rendered_frames
from spraycv.geometry import plume_shape
from spraycv.geometry.types import ConeMeasurement
from spraycv.measure import load_measurer
from spraycv.paths import default_weights

Redraw = Callable[[np.ndarray, Sequence[ConeMeasurement]], np.ndarray]


@dataclasses.dataclass(frozen=True)
class Replayed:
    """One frame: its (H, W) bool truth, and the (H, W) uint8 segmented mask and the
    readings its final reading was redrawn from."""

    truth: np.ndarray
    segmented: np.ndarray
    readings: list[ConeMeasurement]


def replay(data: Path, n: int, weights: Path) -> list[Replayed]:
    """The first n frames of a rendered set through the shipped pipeline, with what each
    final reading's mask was redrawn from (recorded as the pipeline calls the redraw)."""
    calls: dict[int, tuple[np.ndarray, list[ConeMeasurement]]] = {}
    redraw = measure_module.shaped_mask

    def recording(mask, readings, config):
        shaped = redraw(mask, readings, config)
        calls[id(shaped)] = (mask.copy(), list(readings))
        return shaped

    measure_module.shaped_mask = recording
    try:
        measurer = load_measurer(weights)
        frames = []
        for frame in rendered_frames(data)[:n]:
            calls.clear()
            reading = measurer(frame.image())
            # a reading that took plumes from the tiles (measure.with_new_plumes) has a mask
            # no single redraw returned: it is redrawn from its own mask and readings
            fallback = (reading.mask, list(reading.measurements))
            segmented, readings = calls.get(id(reading.mask), fallback)
            frames.append(Replayed(frame.truth_mask() > 0, segmented, readings))
        return frames
    finally:
        measure_module.shaped_mask = redraw


def widened(degrees: float = 0.0, **settings: float) -> Redraw:
    """The redraw with MaskShapeConfig(**settings) and each wedge `degrees` wider a side."""
    config = MaskShapeConfig(**settings)
    plume_front = plume_shape.plume_front

    def front(outline, reading, cfg):
        found = plume_front(outline, reading, cfg)
        if found is None:
            return None
        own, edges, reach = found
        edges = edges.copy()
        edges[0] -= degrees
        edges[-1] += degrees
        return own, edges, reach

    def draw(mask: np.ndarray, readings: Sequence[ConeMeasurement]) -> np.ndarray:
        plume_shape.plume_front = front
        try:
            return plume_shape.shaped_mask(mask, readings, config)
        finally:
            plume_shape.plume_front = plume_front

    return draw


def drop_unclaimed(mask: np.ndarray, readings: Sequence[ConeMeasurement]) -> np.ndarray:
    """The shipped redraw less the segmented components no reading's axis runs through."""
    shaped = plume_shape.shaped_mask(mask, readings, MaskShapeConfig()).astype(bool)
    count, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
    claimed = {
        plume_shape._own_component(labels, np.asarray(m.apex), np.asarray(m.axis), m.length_px)
        for m in readings
        if np.isfinite(m.length_px) and m.length_px > 0 and np.isfinite(m.apex).all()
    }
    unclaimed = np.isin(labels, [k for k in range(1, count) if k not in claimed])
    return (shaped & ~unclaimed).astype(np.uint8)


VARIANTS: dict[str, Redraw] = {
    "shipped": widened(),
    **{f"widen {d:+g} deg": widened(d) for d in (-0.5, -0.25, 0.25, 0.5)},
    **{f"window {w}": widened(front_window=w) for w in (3, 9)},
    **{f"edge_frac {f}": widened(edge_frac=f) for f in (0.15, 0.35)},
    "drop unclaimed": drop_unclaimed,
    "no redraw": lambda mask, readings: mask,
}


def mean_iou(frames: Sequence[Replayed], redraw: Redraw) -> float:
    """The frames' IoU against their truth, averaged (1 where both are empty)."""
    scores = []
    for frame in frames:
        drawn = redraw(frame.segmented, frame.readings).astype(bool)
        union = int((drawn | frame.truth).sum())
        scores.append(1.0 if union == 0 else int((drawn & frame.truth).sum()) / union)
    return float(np.mean(scores))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("datasets/heldout"))
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--weights", type=Path, default=default_weights())
    args = ap.parse_args()
    frames = replay(args.data, args.n, args.weights)
    print(f"{args.data}, {len(frames)} frames, {args.weights}\n")
    print("| redraw | mean IoU |\n|---|---|")
    for name, redraw in VARIANTS.items():
        print(f"| {name} | {mean_iou(frames, redraw):.5f} |")


if __name__ == "__main__":
    main()
