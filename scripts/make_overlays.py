"""Overlay pictures of the bundled samples for the README (docs/images/overlay.png).

Each tile: the image, the mask outline, the fitted boundary lines (red), the axis and band
limits (yellow), the apex (green) and the included angle. `--source truth` measures the
renderer's ground-truth masks (the geometry alone); `--source classical` or a weights file
segments the images first (the whole pipeline).

Usage: python scripts/make_overlays.py [--source truth|classical|WEIGHTS] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from spraycv.geometry import measure_cones
from spraycv.io.images import read_image, to_binary_mask
from spraycv.viz.overlay import draw_overlay

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"


def tile_for(record: dict, source: str, segmenter, size: int) -> np.ndarray:
    image = read_image(SAMPLES / record["image"])
    mask = (
        to_binary_mask(read_image(SAMPLES / record["mask"]))
        if segmenter is None
        else segmenter(image)
    )
    picture = draw_overlay(image, mask, measure_cones(mask), scale=0.9)
    return cv2.resize(picture, (size, size), interpolation=cv2.INTER_AREA)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="truth")
    ap.add_argument("--out", type=Path, default=Path("docs/images/overlay.png"))
    ap.add_argument("--tile", type=int, default=340)
    args = ap.parse_args()
    segmenter = None
    if args.source == "classical":
        from spraycv.segment import segment_classical as segmenter
    elif args.source != "truth":
        from spraycv.runtime.predictor import load_predictor

        segmenter = load_predictor(args.source)
    records = [json.loads(x) for x in (SAMPLES / "labels.jsonl").read_text().splitlines()]
    tiles = [tile_for(r, args.source, segmenter, args.tile) for r in records[:6]]
    grid = np.vstack([np.hstack(tiles[:3]), np.hstack(tiles[3:6])])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), grid)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
