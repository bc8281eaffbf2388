"""A third spray drawer, closer to what a camera in a nozzle test lab or on a field sprayer
records, to check that the pipeline generalises to sprays drawn by code it has never seen.

It imports nothing from spraycv and shares no code with benchmarks/independent_sprays.py.
Each frame, at random (seeded): a frame size (640x480 to 1280x720, square, portrait); one
nozzle on a stem (sometimes spraying sideways) or two to six on a boom (tilted, sometimes in
perspective, plumes overlapping in the far field); flat fans, hollow cones or full cones; a
liquid sheet that breaks up into ligaments and droplets, the droplets drawn as motion streaks
along their rays, lognormal sizes, thinning with distance, a faint mist; front-lit on a dark
booth, back-lit on a diffuser, or outdoors (sky, crop, soil; sun from one side); nozzle
bodies with caps, a boom pipe or a stem, sometimes a lit bracket or a hose; vignetting, shot
and read noise, defocus, colour cast, JPEG 60-95. The truth is exact: the cones the droplets
were drawn in (apex, two straight sides, a front at the length: an arc, or flat where the
spray meets a surface), minus the hardware in front. It writes a folder that
`spraycv eval --data DIR` reads (images/*.jpg, masks/*.png, labels.jsonl, each record with
its `style`: front_lit, back_lit, outdoor), and meta.jsonl: how each frame was drawn.

Its parts are in benchmarks/photo_drawer/: layout (where the nozzles are, how the sprays
look), spray (sheet, ligaments, droplets, mist), scene (backgrounds, lighting, hardware,
distractors) and camera; this script draws a frame from them and writes the folder.

Usage: python benchmarks/photo_sprays.py --out runs/photo --n 200 --seed 1
       spraycv eval --weights weights/default.safetensors --data runs/photo
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its parts: benchmarks/photo_drawer

from photo_drawer.camera import camera
from photo_drawer.common import Rng
from photo_drawer.layout import SIZE_P, SIZES, Nozzle, boom, pick_look, place, single
from photo_drawer.scene import backdrop, compose, distractor, hardware
from photo_drawer.spray import spray_layers

STYLES = ("front_lit", "back_lit", "outdoor")


def truth_mask(nozzles: list[Nozzle], hw: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """(H, W) uint8 {0, 255}: the union of the cones, less the hardware in front."""
    mask = np.zeros(shape, np.uint8)
    for nz in nozzles:
        cv2.fillPoly(mask, [np.round(nz.outline() * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)
    return np.where((mask > 127) & (hw < 0.5), 255, 0).astype(np.uint8)


def draw(style: str, rng: Rng) -> tuple[np.ndarray, np.ndarray, list[Nozzle], dict[str, Any]]:
    """One frame: (H, W, 3) uint8 BGR image, (H, W) uint8 truth mask, the nozzles, and how
    it was drawn."""
    width, height = SIZES[int(rng.choice(len(SIZES), p=SIZE_P))]
    nozzles, mount = (single if rng.random() < 0.35 else boom)(width, height, rng)
    nozzles, mount = place(nozzles, mount, width, height, rng)
    look = pick_look(min(width, height), rng)
    bg, background = backdrop(style, width, height, rng)
    layers = spray_layers(nozzles, look, (height, width), rng)
    image, lighting = compose(style, bg, layers, rng)
    hw = np.zeros((height, width), np.float32)
    hardware(image, hw, nozzles, mount, style, rng)
    extra = distractor(image, hw, layers["cone"], nozzles, style, rng)
    out, cam = camera(image, rng)
    meta = {"width": width, "height": height, "mount": mount.kind, "n": len(nozzles),
            "kind": nozzles[0].kind, "flat_front": nozzles[0].flat_front,
            "background": background, "distractor": extra, **dataclasses.asdict(look), **lighting,
            **cam}  # fmt: skip
    return out, truth_mask(nozzles, hw, (height, width)), nozzles, meta


def frame(seed: int, i: int) -> tuple[bytes, np.ndarray, dict[str, Any], dict[str, Any]]:
    """Frame i of `seed`, as `write` stores it: the JPEG bytes, the (H, W) uint8 truth mask,
    its labels.jsonl record (without the file names) and its meta.jsonl entry. Each frame
    has its own generator, so any one can be drawn alone."""
    rng = np.random.default_rng([seed, i])
    style = STYLES[i % len(STYLES)]
    image, truth, nozzles, meta = draw(style, rng)
    h, w = truth.shape
    quality = int(rng.integers(60, 96))
    jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1].tobytes()
    record = {"width": w, "height": h, "style": style,
              "nozzles": [nz.record(k, w, h) for k, nz in enumerate(nozzles)]}  # fmt: skip
    return jpeg, truth, record, {"style": style, "jpeg": quality, **meta}


def write(out: Path, n: int, seed: int) -> None:
    """n frames, the styles in turn, into `out` (images/, masks/, labels.jsonl, meta.jsonl)."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "masks").mkdir(exist_ok=True)
    with open(out / "labels.jsonl", "w") as labels, open(out / "meta.jsonl", "w") as metas:
        for i in range(n):
            jpeg, truth, record, meta = frame(seed, i)
            name = f"{i:06d}"
            (out / "images" / f"{name}.jpg").write_bytes(jpeg)
            cv2.imwrite(str(out / "masks" / f"{name}.png"), truth)
            files = {"id": name, "image": f"images/{name}.jpg", "mask": f"masks/{name}.png"}
            labels.write(json.dumps({**files, **record}) + "\n")
            metas.write(json.dumps({"id": name, **meta}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    write(args.out, args.n, args.seed)
    print(
        f"{args.n} frames in {args.out}; now: spraycv eval "
        f"--weights weights/default.safetensors --data {args.out}"
    )


if __name__ == "__main__":
    main()
