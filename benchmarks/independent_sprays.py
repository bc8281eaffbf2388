"""A second spray drawer, written apart from the project's renderer, to check that the
pipeline has learnt sprays and not the renderer's look.

It imports nothing from spraycv.data.synth and draws sprays another way: droplets scattered
uniformly in angle inside each cone (so the visible edge is the cone's edge), smooth sheets
with a hard edge, sheets breaking up into droplets, bright on dark and dark on light, with a
nozzle body at each apex, sometimes a lit bar beside them. The truth is exact: the cone each
spray was drawn in. It writes a folder that `spraycv eval --data DIR` reads (images/,
masks/, labels.jsonl, each record with its `style`), so the figures come per style.

Usage: python benchmarks/independent_sprays.py --out runs/independent --n 200 --seed 1
       spraycv eval --data runs/independent
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

SIZE = 512


@dataclass(frozen=True)
class Cone:
    """One spray: apex (x, y) px, unit axis, half angles on the image's left and right of a
    downward axis (deg), length (px)."""

    apex: np.ndarray
    axis: np.ndarray
    half_left: float
    half_right: float
    length: float

    def rim(self, fraction: float, n: int = 48) -> np.ndarray:
        """(n + 1, 2) polygon: the apex and the arc at `fraction` of the length."""
        heading = math.atan2(self.axis[0], self.axis[1])
        angles = heading + np.radians(np.linspace(-self.half_left, self.half_right, n))
        arc = np.stack([np.sin(angles), np.cos(angles)], 1) * fraction * self.length
        return np.vstack([self.apex, self.apex + arc])

    def record(self, index: int) -> dict:
        return {
            "index": index, "nozzle_type": "flat_fan", "state": "on", "visible": True,
            "apex": self.apex.tolist(), "axis": self.axis.tolist(),
            "half_angle_left_deg": self.half_left, "half_angle_right_deg": self.half_right,
            "included_angle_deg": self.half_left + self.half_right,
            "length_px": self.length, "touches_border": self.touches_border(),
        }  # fmt: skip

    def touches_border(self) -> bool:
        rim = self.rim(1.0)
        return bool((rim < 0).any() or (rim > SIZE - 1).any())


def boom(rng: np.random.Generator) -> list[Cone]:
    """One to three sprays side by side, tilted together, that do not overlap."""
    n = int(rng.choice([1, 1, 2, 3]))
    tilt = math.radians(rng.uniform(-25, 25))
    axis = np.array([math.sin(tilt), math.cos(tilt)])
    across = np.array([axis[1], -axis[0]])
    pitch = SIZE / (n + 0.5)
    top = rng.uniform(0.08, 0.3) * SIZE
    length = rng.uniform(0.35, 0.75) * SIZE
    cones = []
    for i in range(n):
        centre = np.array([SIZE / 2, top]) + (i - (n - 1) / 2) * pitch * across
        # the widest half angle that stays clear of the neighbours at 60 % of the length
        room = math.degrees(math.atan2(0.5 * pitch, 0.6 * length)) if n > 1 else 70.0
        half = rng.uniform(5.0, max(6.0, min(70.0, room)))
        skew = rng.uniform(-0.1, 0.1) * half
        cones.append(Cone(centre, axis, half + skew, half - skew, length))
    return cones


def cone_mask(cones: list[Cone], fraction: float = 1.0) -> np.ndarray:
    """(H, W) float32 in [0, 1]: the union of the cones up to `fraction` of their length."""
    mask = np.zeros((SIZE, SIZE), np.float32)
    for c in cones:
        poly = np.round(c.rim(fraction) * 16).astype(np.int32)
        cv2.fillPoly(mask, [poly], 1.0, lineType=cv2.LINE_AA, shift=4)
    return mask


def droplets(cones: list[Cone], rng: np.random.Generator, start: float = 0.0) -> np.ndarray:
    """(H, W) float32 density of droplets, uniform in angle inside each cone, from `start`
    of the length on, thinning out towards the far end."""
    layer = np.zeros((SIZE * 4, SIZE * 4), np.float32)
    for c in cones:
        n = int(rng.uniform(1500, 8000) * (c.half_left + c.half_right) / 60 + 800)
        heading = math.atan2(c.axis[0], c.axis[1])
        angle = heading + np.radians(rng.uniform(-c.half_left, c.half_right, n))
        s = c.length * (start + (1 - start) * rng.random(n) ** 0.7)
        x = c.apex[0] + s * np.sin(angle)
        y = c.apex[1] + s * np.cos(angle)
        radius = rng.uniform(0.5, 1.8) * (0.6 + s / c.length)
        weight = rng.uniform(0.4, 1.0, n)
        for xi, yi, ri, w in zip(x * 16, y * 16, radius * 16, weight, strict=True):
            # a layer at 4x, points in 1/4 of its pixels (shift 2): sub-pixel droplets
            cv2.circle(layer, (int(xi), int(yi)), max(1, int(ri)), w, -1, cv2.LINE_AA, 2)
    return np.clip(cv2.resize(layer, (SIZE, SIZE), interpolation=cv2.INTER_AREA), 0, 1)


def smooth_sheet(cones: list[Cone], rng: np.random.Generator) -> np.ndarray:
    """A long exposure: a smooth sheet, dense near the orifice and thinner further out."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    fade = np.ones((SIZE, SIZE), np.float32)
    for c in cones:
        s = (xx - c.apex[0]) * c.axis[0] + (yy - c.apex[1]) * c.axis[1]
        fade = np.minimum(fade, np.clip(1.1 - 0.6 * s / c.length, 0.3, 1))
    return cone_mask(cones) * fade * rng.uniform(0.5, 1.0)


def sheet_breakup(cones: list[Cone], rng: np.random.Generator) -> np.ndarray:
    """A smooth sheet near the orifice that breaks up into droplets further out."""
    breakup = rng.uniform(0.15, 0.4)
    sheet = cone_mask(cones, breakup) * rng.uniform(0.6, 1.0)
    return np.maximum(sheet, droplets(cones, rng, start=breakup))


# each look's spray: (H, W) float32 in [0, 1], how much spray covers each pixel
SPRAY: dict[str, Callable[[list[Cone], np.random.Generator], np.ndarray]] = {
    "droplets_bright": droplets,
    "droplets_dark": droplets,
    "smooth_sheet": smooth_sheet,
    "sheet_breakup": sheet_breakup,
}
STYLES = tuple(SPRAY)


def backdrop(dark: bool, rng: np.random.Generator) -> np.ndarray:
    """(H, W) float32 grey levels: a smooth gradient, dark or light."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / SIZE
    base = rng.uniform(5, 50) if dark else rng.uniform(140, 220)
    gx, gy = rng.uniform(-30, 30, 2)
    return base + gx * (xx - 0.5) + gy * (yy - 0.5)


def hardware(image: np.ndarray, cones: list[Cone], rng: np.random.Generator) -> None:
    """Nozzle bodies above the apexes and, on some frames, a lit bar clear of the sprays."""
    for c in cones:
        across = np.array([c.axis[1], -c.axis[0]])
        corners = [c.apex - 24 * c.axis - 7 * across, c.apex - 24 * c.axis + 7 * across,
                   c.apex + 4 * across, c.apex - 4 * across]  # fmt: skip
        cv2.fillPoly(image, [np.round(np.array(corners)).astype(np.int32)], rng.uniform(70, 160))
    if rng.random() < 0.4:
        x = int(rng.choice([rng.uniform(10, 40), rng.uniform(SIZE - 40, SIZE - 10)]))
        cv2.rectangle(image, (x, int(SIZE * 0.55)), (x + 12, SIZE - 20), rng.uniform(200, 250), -1)


def draw(style: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[Cone]]:
    """One frame: (H, W, 3) uint8 BGR image, (H, W) uint8 truth mask, the cones."""
    cones = boom(rng)
    dark = style != "droplets_dark" and rng.random() < 0.8
    image = backdrop(dark, rng)
    tone = rng.uniform(170, 250) if dark else rng.uniform(10, 70)
    density = SPRAY[style](cones, rng)
    image = image * (1 - density) + tone * density
    hardware(image, cones, rng)
    image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.5, 1.2))
    image = image + rng.normal(0, rng.uniform(1, 5), image.shape)
    image = cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2BGR)
    truth = (cone_mask(cones) > 0.5).astype(np.uint8) * 255
    return image, truth, cones


def write(out: Path, n: int, seed: int) -> None:
    """n frames, the styles in turn, into `out` (images/, masks/, labels.jsonl)."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "masks").mkdir(exist_ok=True)
    with open(out / "labels.jsonl", "w") as labels:
        for i in range(n):
            rng = np.random.default_rng([seed, i])
            style = STYLES[i % len(STYLES)]
            image, truth, cones = draw(style, rng)
            name = f"{i:06d}"
            cv2.imwrite(str(out / "images" / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
            cv2.imwrite(str(out / "masks" / f"{name}.png"), truth)
            record = {"id": name, "image": f"images/{name}.jpg", "mask": f"masks/{name}.png",
                      "width": SIZE, "height": SIZE, "style": style,
                      "nozzles": [c.record(k) for k, c in enumerate(cones)]}  # fmt: skip
            labels.write(json.dumps(record) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    write(args.out, args.n, args.seed)
    print(f"{args.n} frames in {args.out}; now: spraycv eval --data {args.out}")


if __name__ == "__main__":
    main()
