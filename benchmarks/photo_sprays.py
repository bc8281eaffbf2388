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

Usage: python benchmarks/photo_sprays.py --out runs/photo --n 200 --seed 1
       spraycv eval --weights weights/default.safetensors --data runs/photo
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

Rng = np.random.Generator
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive)

STYLES = ("front_lit", "back_lit", "outdoor")
SIZES = ((640, 480), (800, 600), (1024, 768), (1280, 720), (1024, 1024), (720, 1280))
SIZE_P = (0.2, 0.2, 0.2, 0.2, 0.12, 0.08)
KINDS = ("flat_fan", "hollow_cone", "full_cone")
KIND_P = (0.55, 0.25, 0.2)
INCLUDED = {"flat_fan": (20.0, 120.0), "hollow_cone": (40.0, 90.0), "full_cone": (30.0, 90.0)}
CAPS = (  # ISO 10625 nozzle colours, BGR
    (0, 120, 255), (40, 150, 40), (0, 210, 235), (190, 130, 190), (190, 90, 20),
    (30, 30, 200), (30, 70, 120), (140, 140, 140), (230, 230, 230), (35, 35, 35),
)  # fmt: skip
BODIES = ((30, 30, 30), (110, 110, 115), (60, 140, 190), (175, 175, 180))  # plastic, brass, steel


@dataclass(frozen=True)
class Nozzle:
    """One spray: apex (x, y) px (the orifice), unit axis, half angles (deg) on its left
    (the side of (-uy, ux): image-left for a spray pointing down) and right, length (px,
    along the axis), type, front (an arc, or flat across the axis) and body size (px)."""

    apex: np.ndarray
    axis: np.ndarray
    half_left: float
    half_right: float
    length: float
    kind: str
    flat_front: bool
    size: float

    @property
    def left(self) -> np.ndarray:
        return np.array([-self.axis[1], self.axis[0]])

    def ray(self, a: np.ndarray) -> np.ndarray:
        """(N, 2) unit directions at signed angles a (deg, > 0 to the left) from the axis."""
        r = np.radians(np.asarray(a, float))[:, None]
        return np.cos(r) * self.axis + np.sin(r) * self.left

    def reach(self, a: np.ndarray) -> np.ndarray:
        """Distance (px) from the apex to the front along the rays at angles a (deg)."""
        a = np.clip(np.asarray(a, float), -self.half_right, self.half_left)
        return (
            self.length / np.cos(np.radians(a))
            if self.flat_front
            else np.full(a.shape, self.length)
        )

    def outline(self, n: int = 160) -> np.ndarray:
        """(n + 1, 2) polygon of the cone: the apex, then the front from right to left."""
        a = np.linspace(-self.half_right, self.half_left, n)
        return np.vstack([self.apex, self.apex + self.ray(a) * self.reach(a)[:, None]])

    def polar(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Distance (px) from the apex and signed angle (deg) from the axis of pixels."""
        dx, dy = xs - self.apex[0], ys - self.apex[1]
        along = dx * self.axis[0] + dy * self.axis[1]
        across = dx * self.left[0] + dy * self.left[1]
        return np.hypot(dx, dy), np.degrees(np.arctan2(across, along))

    def inside(self, r: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Soft (1 px wide) membership in the cone of pixels at (r, a)."""
        left = r * np.sin(np.radians(self.half_left - a))
        right = r * np.sin(np.radians(a + self.half_right))
        return np.clip(np.minimum(np.minimum(left, right), self.reach(a) - r) + 0.5, 0, 1)

    def record(self, index: int, width: int, height: int) -> dict[str, Any]:
        """The nozzle's truth, in the fields `spraycv eval` reads."""
        rim = self.outline()
        out = (rim < 0).any() or (rim[:, 0] > width - 1).any() or (rim[:, 1] > height - 1).any()
        return {
            "index": index, "nozzle_type": self.kind, "state": "on", "visible": True,
            "apex": [float(v) for v in self.apex], "axis": [float(v) for v in self.axis],
            "half_angle_left_deg": float(self.half_left),
            "half_angle_right_deg": float(self.half_right),
            "included_angle_deg": float(self.half_left + self.half_right),
            "length_px": float(self.length), "touches_border": bool(out),
        }  # fmt: skip


@dataclass(frozen=True)
class Mount:
    """What holds the nozzles: a boom pipe (a line through path[0] along path[1] - path[0])
    or, for one nozzle, a stem (a polyline from the nozzle's back)."""

    kind: str
    path: np.ndarray
    radius: float


@dataclass(frozen=True)
class Look:
    """How a frame's sprays look: sheet breakup (fraction of the length), mean cover of the
    droplets over the cone (their summed opacity per px^2), median droplet diameter (px),
    its lognormal sigma, streak length at the orifice (px; the exposure), mist strength and
    sheet opacity."""

    breakup: float
    cover: float
    diameter: float
    sigma: float
    streak: float
    mist: float
    sheet: float


def unit(deg: float) -> np.ndarray:
    """The unit axis tilted `deg` from image-down, towards image-right when > 0."""
    return np.array([math.sin(math.radians(deg)), math.cos(math.radians(deg))])


def pick_halves(kind: str, included: float, rng: Rng) -> tuple[float, float]:
    """Left and right half angles (deg) near `included`, sometimes a little asymmetric."""
    lo, hi = INCLUDED[kind]
    inc = float(np.clip(included * rng.uniform(0.97, 1.03), lo, hi))
    skew = rng.uniform(-0.08, 0.08) if rng.random() < 0.5 else 0.0
    return inc / 2 * (1 + skew), inc / 2 * (1 - skew)


def single(width: int, height: int, rng: Rng) -> tuple[list[Nozzle], Mount]:
    """One nozzle on a stem, usually spraying down, sometimes sideways."""
    short = min(width, height)
    kind = str(rng.choice(KINDS, p=KIND_P))
    sideways = rng.random() < 0.25
    tilt = rng.choice([-1, 1]) * rng.uniform(50, 95) if sideways else rng.uniform(-25, 25)
    hl, hr = pick_halves(kind, rng.uniform(*INCLUDED[kind]), rng)
    room = width if sideways else height
    length = rng.uniform(0.2, 0.9) * min(short, 0.85 * room)
    size = short * rng.uniform(0.03, 0.055)
    flat = bool(rng.random() < 0.25)
    nz = Nozzle(np.zeros(2), unit(tilt), hl, hr, length, kind, flat, size)
    back = -2.0 * size * nz.axis
    if sideways:  # an elbow, then up out of the frame
        elbow = back - 1.2 * size * nz.axis
        path = np.array([back, elbow, elbow + np.array([0.0, -3.0 * max(width, height)])])
    else:
        path = np.array([back, back - 3.0 * max(width, height) * nz.axis])
    return [nz], Mount("stem", path, size * rng.uniform(0.3, 0.45))


def boom_spacing(n: int, inc: float, width: int, short: int, rng: Rng) -> tuple[int, float, float]:
    """(nozzles, length, pitch) of a boom that fits the frame, neighbours overlapping only
    beyond a fraction (0.3-0.7) of their length."""
    tan_sum = 2 * math.tan(math.radians(inc / 2))
    clear = rng.uniform(0.3, 0.7)
    while n > 2 and 0.85 * width / (clear * tan_sum * (n - 1)) < 0.2 * short:
        n -= 1
    l_fit = 0.85 * width / (clear * tan_sum * (n - 1))
    length = rng.uniform(0.2 * short, max(0.2 * short, min(0.9 * short, l_fit)))
    pitch = clear * length * tan_sum * rng.uniform(1.0, 1.4)
    pitch = float(np.clip(pitch, 0.12 * short, 0.85 * width / (n - 1)))
    return n, length, pitch


def boom(width: int, height: int, rng: Rng) -> tuple[list[Nozzle], Mount]:
    """Two to six like nozzles on a boom tilted up to 15 deg, sometimes in perspective (the
    spacing and the sprays shrinking along it)."""
    short = min(width, height)
    kind = str(rng.choice(KINDS, p=KIND_P))
    inc = rng.uniform(*INCLUDED[kind])
    n, length, pitch = boom_spacing(int(rng.integers(2, 7)), inc, width, short, rng)
    shrink = 1.0 if rng.random() < 0.6 else rng.uniform(0.85, 0.96)
    theta = math.radians(rng.uniform(-15, 15)) * (1 if rng.random() < 0.5 else 0.3)
    along = np.array([math.cos(theta), math.sin(theta)]) * rng.choice([-1, 1])
    tilt = -math.degrees(theta) + rng.uniform(-10, 10)
    size0 = short * rng.uniform(0.025, 0.045)
    flat = bool(rng.random() < 0.3)
    scales = shrink ** np.arange(n)
    offsets = np.concatenate([[0.0], np.cumsum(pitch * scales[:-1])])
    offsets -= offsets.mean()
    nozzles = []
    for k in range(n):
        hl, hr = pick_halves(kind, inc, rng)
        axis = unit(tilt + rng.uniform(-1.5, 1.5))
        apex = offsets[k] * along
        nozzles.append(
            Nozzle(apex, axis, hl, hr, length * scales[k], kind, flat, size0 * scales[k])
        )
    start = -2.9 * size0 * unit(tilt)
    return nozzles, Mount("boom", np.array([start, start + along]), size0 * rng.uniform(0.45, 0.7))


def place(
    nozzles: list[Nozzle], mount: Mount, width: int, height: int, rng: Rng
) -> tuple[list[Nozzle], Mount]:
    """Move the set into the frame: all of it where it fits, else its nozzles kept in and the
    sprays running out of the frame."""
    pts = np.vstack(
        [nz.outline() for nz in nozzles] + [nz.apex - 2.2 * nz.size * nz.axis for nz in nozzles]
    )
    lo, hi = pts.min(0), pts.max(0)
    axis = np.mean([nz.axis for nz in nozzles], 0)
    apexes = np.array([nz.apex for nz in nozzles])
    frame, shift = np.array([width, height], float), np.zeros(2)
    for d in (0, 1):
        margin = 0.02 * frame[d]
        if hi[d] - lo[d] < frame[d] - 2 * margin:
            shift[d] = rng.uniform(margin - lo[d], frame[d] - margin - hi[d])
        elif abs(axis[d]) > 0.5:  # the sprays run out of the frame along d; the nozzles stay
            back = apexes[:, d].min() if axis[d] > 0 else apexes[:, d].max()
            room = rng.uniform(0.04, 0.12) * frame[d] + 2.2 * max(nz.size for nz in nozzles)
            shift[d] = room - back if axis[d] > 0 else frame[d] - room - back
        else:  # wider than the frame: the nozzles near the middle
            shift[d] = frame[d] / 2 - apexes[:, d].mean() + rng.uniform(-0.08, 0.08) * frame[d]
    moved = [dataclasses.replace(nz, apex=nz.apex + shift) for nz in nozzles]
    return moved, dataclasses.replace(mount, path=mount.path + shift)


def pick_look(short: int, rng: Rng) -> Look:
    """The frame's spray look, at random within realistic ranges."""
    streak = 0.0 if rng.random() < 0.2 else rng.uniform(0.004, 0.04) * short
    return Look(
        breakup=rng.uniform(0.15, 0.4), cover=rng.uniform(0.25, 1.0),
        diameter=math.exp(rng.uniform(math.log(0.3), math.log(2.2))) * short / 768,
        sigma=rng.uniform(0.35, 0.7), streak=streak, mist=rng.uniform(0.03, 0.15),
        sheet=rng.uniform(0.6, 1.0),
    )  # fmt: skip


def sample_angles(nz: Nozzle, n: int, rng: Rng) -> np.ndarray:
    """(n,) signed angles (deg) of droplets: flat fans even with heavier rims, hollow cones
    denser at the edges (a shell seen side on), full cones denser in the middle."""
    if nz.kind == "flat_fan":
        t = rng.uniform(-1, 1, n)
        rim = rng.random(n) < 0.12
        t[rim] = np.sign(t[rim]) * (1 - np.abs(rng.normal(0, 0.04, int(rim.sum()))))
    elif nz.kind == "hollow_cone":
        t = np.sin(rng.uniform(-np.pi / 2, np.pi / 2, n))
    else:
        t = np.where(rng.random(n) < 0.65, 2 * rng.beta(1.5, 1.5, n) - 1, rng.uniform(-1, 1, n))
    t = np.clip(t, -1, 1)
    return np.where(t >= 0, t * nz.half_left, t * nz.half_right)


def breakup_curve(nz: Nozzle, fraction: float, rng: Rng) -> tuple[np.ndarray, np.ndarray]:
    """(angles deg, distances px): where the sheet breaks up, ragged across the spray."""
    a = np.linspace(-nz.half_right, nz.half_left, 96)
    t = (a + nz.half_right) / (nz.half_left + nz.half_right)
    wave = sum(
        rng.uniform(0.02, 0.07) * np.sin(2 * np.pi * f * t + rng.uniform(0, 6.3))
        for f in (2, 5, 13)
    )
    return a, fraction * nz.length * rng.uniform(0.9, 1.1) * (1 + wave)


def droplets(
    nz: Nozzle, curve: tuple[np.ndarray, np.ndarray], look: Look, scale: float, rng: Rng
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Droplets beyond the breakup as motion streaks along their rays: (polylines, widths,
    weights). Even mass per unit distance, so they thin out as 1/distance; a few strays."""
    b = float(np.mean(curve[1])) / nz.length
    area = 0.5 * math.radians(nz.half_left + nz.half_right) * nz.length**2 * (1 - b * b)
    d = np.clip(rng.lognormal(math.log(look.diameter * scale), look.sigma, 4000), 0.2, 8)
    line = np.maximum(look.streak * scale * rng.uniform(0.5, 1.0, 4000), 0.75)
    pen = pen_width(d)  # what one droplet covers, px^2 times opacity:
    one = (
        np.minimum(d * d, 1) * d / (d + 0.5 * line) * np.where(pen > 1, pen + 1.2, 1) * (line + pen)
    )
    n = int(min(150000, look.cover * area / (0.75 * float(one.mean()))))
    a = sample_angles(nz, n, rng)
    lo, hi = np.interp(a, *curve) * rng.uniform(0.9, 1.0, n), nz.reach(a)
    s = lo + (hi - lo) * rng.random(n) ** 1.15
    k = max(1, n // 250)  # strays, a little outside the cone
    a[:k] = np.where(a[:k] >= 0, nz.half_left, -nz.half_right) + np.sign(
        a[:k] + 1e-9
    ) * rng.uniform(0.3, 3, k)
    d = np.clip(rng.lognormal(math.log(look.diameter * scale), look.sigma, n), 0.2, 8)
    streak = look.streak * scale * (1 - 0.5 * s / nz.length) * rng.uniform(0.7, 1.3, n)
    e = np.minimum(s + np.maximum(streak, 0.75), hi)  # at least a dot: AA draws nothing shorter
    s = np.minimum(s, e - 0.75)
    p0 = nz.apex + nz.ray(a) * s[:, None]
    p1 = nz.apex + nz.ray(a) * e[:, None]
    weight = np.minimum(d * d, 1) * d / (d + 0.5 * (e - s)) * rng.uniform(0.5, 1, n)
    lines = list(np.round(np.stack([p0, p1], 1) * 16).astype(np.int32))
    return lines, pen_width(d), weight


def pen_width(d: np.ndarray) -> np.ndarray:
    """The line thickness that draws droplets of diameter d (px): anti-aliased, thickness 1
    draws about 1 px wide, thickness t > 1 about t + 1.2 px."""
    return np.maximum(1, np.round(d - 0.8)).astype(int)


def ligaments(
    nz: Nozzle, curve: tuple[np.ndarray, np.ndarray], look: Look, scale: float, rng: Rng
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Where the sheet breaks up: wavy bands across the rays and threads along them."""
    n = int(rng.uniform(15, 50) * (nz.half_left + nz.half_right) / 60 + 8)
    lines = []
    for a0 in sample_angles(nz, n, rng):
        s0 = float(np.interp(a0, *curve))
        if rng.random() < 0.55:  # a band across the rays
            span = rng.uniform(1.5, 7)
            aa = np.clip(np.linspace(a0 - span / 2, a0 + span / 2, 9), -nz.half_right, nz.half_left)
            ss = s0 * rng.uniform(0.98, 1.12) + rng.normal(0, 0.004 * nz.length, 9)
        else:  # a thread along its ray
            aa = np.full(4, a0) + rng.normal(0, 0.3, 4)
            aa = np.clip(aa, -nz.half_right, nz.half_left)
            ss = s0 * rng.uniform(0.92, 1.02) + np.linspace(
                0, rng.uniform(0.03, 0.1) * nz.length, 4
            )
        ss = np.minimum(ss, nz.reach(aa))
        lines.append(np.round((nz.apex + nz.ray(aa) * ss[:, None]) * 16).astype(np.int32))
    width = np.maximum(1, np.round(rng.uniform(0.8, 2.5, n) * look.diameter * scale)).astype(int)
    return lines, width, rng.uniform(0.4, 0.9, n)


LEVELS = np.array([0.03, 0.06, 0.1, 0.16, 0.25, 0.4, 0.6, 0.85])


def paint(
    shape: tuple[int, int], lines: list[np.ndarray], width: np.ndarray, weight: np.ndarray, rng: Rng
) -> np.ndarray:
    """(H, W) float32: anti-aliased polylines (16x sub-pixel points), drawn in batches of
    like width and weight; the batches add up."""
    layer, scratch = np.zeros(shape, np.float32), np.zeros(shape, np.uint8)
    level = np.abs(np.log(np.maximum(weight, 1e-3))[:, None] - np.log(LEVELS)).argmin(1)
    keys = np.minimum(width, 6) * 100 + level * 10 + rng.integers(0, 3, len(lines))
    for key in np.unique(keys):
        idx = np.flatnonzero(keys == key)
        scratch[:] = 0
        colour = round(255 * float(LEVELS[(key // 10) % 10]))
        cv2.polylines(
            scratch, [lines[i] for i in idx], False, colour, int(key // 100), cv2.LINE_AA, 4
        )
        layer += scratch.astype(np.float32) / 255
    return layer


def smooth_noise(h: int, w: int, cell: float, rng: Rng) -> np.ndarray:
    """(h, w) float32 smooth noise of unit-ish spread, features about `cell` px wide."""
    gh, gw = max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)
    grid = rng.normal(size=(gh, gw)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def crop_of(points: np.ndarray, width: int, height: int, pad: float) -> Box | None:
    """The integer box around points, padded and clipped to the frame (None if empty)."""
    x0, y0 = np.floor(points.min(0) - pad).astype(int)
    x1, y1 = np.ceil(points.max(0) + pad).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def sheet(
    nz: Nozzle,
    curve: tuple[np.ndarray, np.ndarray],
    look: Look,
    r: np.ndarray,
    a: np.ndarray,
    rng: Rng,
) -> np.ndarray:
    """The intact liquid sheet near the orifice (opacity on the cone's crop): thinning with
    distance, waves across, perforated and ragged where it breaks up; flat fans with
    heavier rims, hollow cones bright at the limbs, full cones a dense core."""
    t = np.clip(np.where(a >= 0, a / nz.half_left, -a / nz.half_right), -1, 1)
    if nz.kind == "flat_fan":
        profile = 0.55 + 0.45 * np.exp(-(((1 - np.abs(t)) / 0.06) ** 2))
    elif nz.kind == "hollow_cone":
        profile = np.minimum(1, 0.45 / np.sqrt(np.maximum(1 - t * t, 0.05)))
    else:
        profile = 0.45 + 0.55 * np.sqrt(np.maximum(1 - t * t, 0))
    end = np.interp(a, *curve)
    thin = 0.55 + 0.45 * np.exp(-r / (0.5 * end))
    lam = rng.uniform(0.07, 0.16) * float(np.mean(curve[1]))
    waves = 1 + rng.uniform(0.05, 0.2) * np.sin(2 * np.pi * r / lam + 3 * t + rng.uniform(0, 6.3))
    fade = np.clip((end - r) / (0.06 * end + 1), 0, 1)
    holes = smooth_noise(*r.shape, max(3.0, 0.015 * nz.length), rng)
    fade = fade * np.where((holes > 1.1) & (r > 0.55 * end), 0.15, 1.0)
    return look.sheet * profile * thin * waves * fade * nz.inside(r, a)


def spray_layers(
    nozzles: list[Nozzle], look: Look, shape: tuple[int, int], rng: Rng
) -> dict[str, np.ndarray]:
    """(H, W) float32 layers of the frame's sprays: cover (how much spray hides the
    background, 0-1), side (-1 on a plume's right edge to 1 on its left), cone (membership)."""
    h, w = shape
    sheets, cone, far = (np.zeros(shape, np.float32) for _ in range(3))
    side_sum, side_w = np.zeros(shape, np.float32), np.full(shape, 1e-6, np.float32)
    lines, widths, weights = [], [], []
    biggest = max(nz.size for nz in nozzles)
    for nz in nozzles:
        scale = nz.size / biggest
        curve = breakup_curve(nz, look.breakup, rng)
        for part in (droplets(nz, curve, look, scale, rng), ligaments(nz, curve, look, scale, rng)):
            lines += part[0]
            widths.append(part[1])
            weights.append(part[2])
        box = crop_of(nz.outline(), w, h, 4)
        if box is None:
            continue
        x0, y0, x1, y1 = box
        ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        r, a = nz.polar(xs, ys)
        inside = nz.inside(r, a)
        t = np.clip(np.where(a >= 0, a / nz.half_left, a / nz.half_right), -1, 1)
        sl = np.s_[y0:y1, x0:x1]
        sheets[sl] = 1 - (1 - sheets[sl]) * (1 - sheet(nz, curve, look, r, a, rng))
        cone[sl] = np.maximum(cone[sl], inside)
        far[sl] = np.maximum(far[sl], inside * np.clip(r / nz.length, 0, 1))
        side_sum[sl] += inside * t
        side_w[sl] += inside
    drops = paint(shape, lines, np.concatenate(widths), np.concatenate(weights), rng)
    sigma = 0.006 * min(shape) + 1
    mist = look.mist * cv2.GaussianBlur(0.3 * cone + 0.7 * far, (0, 0), sigma)
    cover = 1 - (1 - sheets) * np.exp(-1.6 * drops) * (1 - mist)
    return {"cover": cover, "side": side_sum / side_w, "cone": cone}


def booth(w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """A dark test booth: black curtain folds or a dark wall with a faint rig frame."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = rng.uniform(4, 38) + rng.uniform(-12, 12) * xx / w + rng.uniform(-10, 10) * yy / h
    img += 2.5 * smooth_noise(h, w, 0.15 * w, rng)
    kind = "curtain" if rng.random() < 0.5 else "wall"
    if kind == "curtain":
        period = rng.uniform(0.04, 0.12) * w
        img += rng.uniform(3, 10) * np.sin(
            2 * np.pi * xx / period + 1.5 * smooth_noise(h, w, 0.3 * h, rng)
        )
    else:
        for _ in range(int(rng.integers(0, 3))):  # aluminium profiles of the rig, faintly lit
            x = int(rng.uniform(0, w))
            cv2.rectangle(
                img,
                (x, 0),
                (x + int(rng.uniform(6, 20)), h),
                float(img.mean() + rng.uniform(8, 25)),
                -1,
            )
    img += smooth_noise(h, w, 3, rng) * rng.uniform(0.5, 2)
    tint = 1 + rng.normal(0, 0.05, 3)
    return np.clip(img, 0, 255)[..., None] * tint, kind


def diffuser(w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """A bright LED diffuser behind the spray: a hot spot, falling off to the edges,
    sometimes a seam between panels."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy, spread = (
        rng.uniform(0.3, 0.7) * w,
        rng.uniform(0.3, 0.7) * h,
        rng.uniform(0.4, 1.0) * max(w, h),
    )
    img = rng.uniform(165, 235) + rng.uniform(0, 30) * np.exp(
        -((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * spread**2)
    )
    img -= rng.uniform(0, 25) * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2) * 4
    img += 1.5 * smooth_noise(h, w, 0.1 * w, rng)
    kind = "diffuser"
    if rng.random() < 0.3:
        kind = "diffuser_seam"
        x = int(rng.uniform(0.1, 0.9) * w)
        cv2.line(
            img, (x, 0), (x, h), float(img.mean() - rng.uniform(10, 35)), int(rng.integers(2, 6))
        )
    tint = 1 + rng.normal(0, 0.03, 3)
    return np.clip(img, 0, 255)[..., None] * tint, kind


def ground(w: int, h: int, kind: str, rng: Rng) -> np.ndarray:
    """(h, w, 3) BGR crop canopy in rows, or bare soil (lumpy, with straw)."""
    xx = np.mgrid[0:h, 0:w][1].astype(np.float32)
    fine, coarse = smooth_noise(h, w, 4, rng), smooth_noise(h, w, 40, rng)
    soil = np.array([50, 80, 115]) * rng.uniform(0.7, 1.2)
    img = soil * (1 + 0.12 * fine[..., None] + 0.1 * coarse[..., None])
    if kind == "crop":
        period = rng.uniform(0.12, 0.3) * w
        rows = np.cos(
            2 * np.pi * (xx - rng.uniform(0, period)) / period + 0.4 * smooth_noise(h, w, 60, rng)
        )
        leaves = np.clip(rows + 0.6 + 0.8 * smooth_noise(h, w, 6, rng), 0, 1)[..., None]
        green = (
            np.array([45, 125, 70])
            * rng.uniform(0.7, 1.2)
            * (1 + 0.3 * smooth_noise(h, w, 5, rng))[..., None]
        )
        img = img * (1 - leaves) + green * leaves
    else:
        for _ in range(int(rng.integers(20, 80))):  # straw
            p = rng.uniform(0, 1, 2) * [w, h]
            q = p + rng.normal(0, 12, 2)
            cv2.line(
                img, tuple(p.astype(int)), tuple(q.astype(int)), (110, 170, 190), 1, cv2.LINE_AA
            )
    return img


def field(w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """Outdoors: crop or soil, sometimes with the sky above a horizon; lit by the sun."""
    kind = str(rng.choice(["crop", "soil", "sky_crop", "sky_soil"], p=[0.35, 0.25, 0.25, 0.15]))
    img = ground(w, h, kind.removeprefix("sky_"), rng) * rng.uniform(0.6, 1.1)
    if kind.startswith("sky"):
        horizon = int(rng.uniform(0.15, 0.5) * h)
        t = np.linspace(0, 1, horizon, dtype=np.float32)[:, None, None]
        top, low = np.array([215, 160, 100]), np.array([240, 225, 205])
        sky = top * (1 - t) + low * t + 0 * np.zeros((1, w, 1))
        clouds = np.clip(smooth_noise(horizon, w, 0.2 * w, rng) - 0.3, 0, 1)[..., None]
        sky = sky * (1 - 0.6 * clouds) + 245 * 0.6 * clouds
        img[:horizon] = sky * rng.uniform(0.85, 1.05)
    return np.clip(img, 0, 255), kind


def backdrop(style: str, w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """(h, w, 3) float32 BGR background of the style, and what it is."""
    img, kind = {"front_lit": booth, "back_lit": diffuser, "outdoor": field}[style](w, h, rng)
    return img.astype(np.float32), kind


def compose(
    style: str, bg: np.ndarray, layers: dict[str, np.ndarray], rng: Rng
) -> tuple[np.ndarray, dict[str, float]]:
    """Spray over background: back-lit it darkens the diffuser; front-lit and outdoors it
    scatters light, brighter on the side the lamp or the sun is on (by 1 + side_k at that
    edge, 1 - side_k at the other). Returns the image and the lighting drawn."""
    cover, side = layers["cover"][..., None], layers["side"][..., None]
    sun = rng.choice([-1, 1])
    if style == "back_lit":
        tone, k = rng.uniform(15, 80), rng.uniform(0, 0.15)
        shade = tone * (1 + k * sun * side)
        image = bg * (1 - rng.uniform(0.75, 0.97) * cover) + 0.9 * cover * shade
        return image, {"side_k": k, "spray_tone": tone}
    h, w = bg.shape[:2]
    k = rng.uniform(0.1, 0.3) if style == "front_lit" else rng.uniform(0.3, 0.6)
    lamp = 1 + 0.15 * np.clip(smooth_noise(h, w, 0.5 * max(h, w), rng), -1.5, 1.5)[..., None]
    tone = rng.uniform(170, 255)
    tint = np.array([1.04, 1.0, 0.96]) if style == "outdoor" else 1 + rng.normal(0, 0.02, 3)
    keep = rng.uniform(0.4, 0.6) if style == "front_lit" else rng.uniform(0.6, 0.85)
    bright = tone * lamp * (1 + k * sun * side)
    image = bg * (1 - keep * cover) + cover * bright * tint
    return image, {"side_k": k, "spray_tone": tone}


def cylinder(
    img: np.ndarray,
    hw: np.ndarray,
    p0: np.ndarray,
    p1: np.ndarray,
    radius: float,
    colour: Any,
    light: float,
    spec: float,
    facets: bool = False,
) -> None:
    """A shaded cylinder (or hex nut with facets) from p0 to p1 drawn over img, in place;
    hw marks (0-1) the pixels it covers."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    length = float(np.hypot(*(p1 - p0)))
    if length < 1e-3:
        return
    u = (p1 - p0) / length
    n = np.array([-u[1], u[0]])
    corners = np.array([p0 + n * radius, p0 - n * radius, p1 + n * radius, p1 - n * radius])
    box = crop_of(corners, img.shape[1], img.shape[0], 2)
    if box is None:
        return
    x0, y0, x1, y1 = box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    t = (xs - p0[0]) * u[0] + (ys - p0[1]) * u[1]
    v = ((xs - p0[0]) * n[0] + (ys - p0[1]) * n[1]) / radius
    alpha = np.clip((1 - np.abs(v)) * radius + 0.5, 0, 1) * np.clip(
        np.minimum(t, length - t) + 0.5, 0, 1
    )
    vq = np.round(v * 1.5) / 1.5 if facets else v
    shade = light * (0.3 + 0.7 * np.sqrt(np.clip(1 - vq * vq, 0, 1))) * (1 + 0.25 * v)
    col = (
        np.asarray(colour, np.float32) * shade[..., None]
        + spec * 255 * np.exp(-(((vq - 0.35) / 0.15) ** 2))[..., None]
    )
    sl = np.s_[y0:y1, x0:x1]
    img[sl] = img[sl] * (1 - alpha[..., None]) + col * alpha[..., None]
    hw[sl] = np.maximum(hw[sl], alpha)


def hardware_light(style: str, rng: Rng) -> tuple[float, float]:
    """(light, specular) of the hardware: lit in the booth and outdoors, a silhouette on the
    diffuser."""
    if style == "back_lit":
        return rng.uniform(0.2, 0.4), rng.uniform(0.05, 0.2)
    return rng.uniform(0.75, 1.15), rng.uniform(0.3, 0.8)


def hardware(
    img: np.ndarray, hw: np.ndarray, nozzles: list[Nozzle], mount: Mount, style: str, rng: Rng
) -> None:
    """The boom pipe or stem, then each nozzle: a drop pipe to the boom, a body, a coloured
    cap, and a metal tip ending at the orifice."""
    light, spec = hardware_light(style, rng)
    metal = np.array([170, 170, 175]) if rng.random() < 0.6 else np.array([40, 40, 45])
    cap, body = CAPS[int(rng.integers(len(CAPS)))], BODIES[int(rng.integers(len(BODIES)))]
    if mount.kind == "boom":
        p, along = mount.path[0], mount.path[1] - mount.path[0]
        far = 3.0 * max(img.shape[:2])
        cylinder(img, hw, p - far * along, p + far * along, mount.radius, metal, light, spec)
        normal = np.array([-along[1], along[0]])
        for nz in nozzles:
            back = nz.apex - 1.85 * nz.size * nz.axis
            reach = float((back - p) @ normal / (nz.axis @ normal))  # along -axis to the pipe
            cylinder(img, hw, back, back - reach * nz.axis, 0.22 * nz.size, metal, light, spec)
            cylinder(
                img,
                hw,
                back - (reach - 1.2 * mount.radius) * nz.axis,
                back - (reach + 0.6 * mount.radius) * nz.axis,
                1.25 * mount.radius,
                body,
                light,
                spec,
                True,
            )
    else:
        for q0, q1 in itertools.pairwise(mount.path):
            cylinder(img, hw, q0, q1, mount.radius, metal, light, spec)
    for nz in nozzles:
        s, back = nz.size, -nz.axis
        cylinder(
            img, hw, nz.apex + back * 0.9 * s, nz.apex + back * 1.9 * s, 0.42 * s, body, light, spec
        )
        cylinder(
            img,
            hw,
            nz.apex + back * 0.3 * s,
            nz.apex + back * 0.95 * s,
            0.55 * s,
            cap,
            light,
            spec,
            True,
        )
        cylinder(img, hw, nz.apex, nz.apex + back * 0.35 * s, 0.2 * s, metal, light, spec)


def clear_of(cones: np.ndarray, points: np.ndarray) -> bool:
    """Whether none of points (px) falls on a cone of the (H, W) membership."""
    h, w = cones.shape
    xi = np.clip(np.round(points[:, 0]).astype(int), 0, w - 1)
    yi = np.clip(np.round(points[:, 1]).astype(int), 0, h - 1)
    return bool((cones[yi, xi] < 0.5).all())


def distractor(
    img: np.ndarray, hw: np.ndarray, cones: np.ndarray, nozzles: list[Nozzle], style: str, rng: Rng
) -> str:
    """Sometimes a lit bracket or a hose, clear of the sprays or (now and then) in front
    of one; returns what was drawn."""
    if rng.random() > 0.45:
        return "none"
    h, w = cones.shape
    short, light, spec = min(h, w), *hardware_light(style, rng)
    kind, in_front = str(rng.choice(["bracket", "hose"])), rng.random() < 0.2
    for _ in range(20):
        if kind == "bracket":
            angle = math.radians(rng.choice([0, 90]) + rng.uniform(-12, 12))
            centre, half = rng.uniform(0, 1, 2) * [w, h], rng.uniform(0.08, 0.22) * short
            d = np.array([math.cos(angle), math.sin(angle)]) * half
            path, radius = np.array([centre - d, centre + d]), rng.uniform(0.008, 0.02) * short
        else:
            nz = nozzles[int(rng.integers(len(nozzles)))]
            end = nz.apex - 2.5 * nz.size * nz.axis
            start = np.array([rng.choice([-20, w + 20]), rng.uniform(0, 0.6) * h])
            mid = (start + end) / 2 + rng.normal(0, 0.15 * short, 2)
            tt = np.linspace(0, 1, 40)[:, None]
            path = (1 - tt) ** 2 * start + 2 * tt * (1 - tt) * mid + tt**2 * end
            radius = rng.uniform(0.01, 0.022) * short
        dense = np.vstack([np.linspace(p, q, 12) for p, q in itertools.pairwise(path)])
        if in_front or clear_of(cones, dense):
            break
    else:
        return "none"
    colour = (205, 205, 210) if kind == "bracket" else CAPS[int(rng.choice([9, 4, 8, 0]))]
    boost = 1.3 if kind == "bracket" else 1.0
    for q0, q1 in itertools.pairwise(path):
        cylinder(img, hw, q0, q1, radius, colour, light * boost, spec * boost)
    return kind + ("_in_front" if not clear_of(cones, dense) else "")


def camera(img: np.ndarray, rng: Rng) -> tuple[np.ndarray, dict[str, Any]]:
    """The camera: exposure, colour cast, vignetting, lens blur (sometimes defocus), shot
    and read noise; (H, W, 3) uint8 and what it did."""
    h, w = img.shape[:2]
    img = img * rng.uniform(0.85, 1.15)
    cast = rng.random() < 0.35
    if cast:
        img = img * (1 + rng.normal(0, 0.07, 3))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = (((xx - w / 2) / (w / 2)) ** 2 + ((yy - h / 2) / (h / 2)) ** 2) / 2
    vignette = rng.uniform(0.05, 0.4)
    img = img * (1 - vignette * r2)[..., None]
    defocus = float(rng.uniform(1, 3)) if rng.random() < 0.3 else 0.0
    if defocus:
        k = math.ceil(defocus)
        disk = cv2.circle(
            np.zeros((2 * k + 1, 2 * k + 1), np.float32), (k, k), k, 1.0, -1, cv2.LINE_AA
        )
        img = cv2.filter2D(img, -1, disk / disk.sum())
    img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), rng.uniform(0.4, 0.8))
    gain, read = rng.uniform(0.05, 0.6), rng.uniform(0.8, 4)
    img = img + rng.normal(0, 1, img.shape) * np.sqrt(gain * np.clip(img, 0, 255) + read * read)
    out = np.clip(np.round(img), 0, 255).astype(np.uint8)
    return out, {
        "cast": cast,
        "vignette": vignette,
        "defocus_px": defocus,
        "gain": gain,
        "read": read,
    }


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


def write(out: Path, n: int, seed: int) -> None:
    """n frames, the styles in turn, into `out` (images/, masks/, labels.jsonl, meta.jsonl)."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "masks").mkdir(exist_ok=True)
    with open(out / "labels.jsonl", "w") as labels, open(out / "meta.jsonl", "w") as metas:
        for i in range(n):
            rng = np.random.default_rng([seed, i])
            style = STYLES[i % len(STYLES)]
            image, truth, nozzles, meta = draw(style, rng)
            h, w = truth.shape
            name = f"{i:06d}"
            quality = int(rng.integers(60, 96))
            cv2.imwrite(
                str(out / "images" / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, quality]
            )
            cv2.imwrite(str(out / "masks" / f"{name}.png"), truth)
            record = {"id": name, "image": f"images/{name}.jpg", "mask": f"masks/{name}.png",
                      "width": w, "height": h, "style": style,
                      "nozzles": [nz.record(k, w, h) for k, nz in enumerate(nozzles)]}  # fmt: skip
            labels.write(json.dumps(record) + "\n")
            metas.write(json.dumps({"id": name, "style": style, "jpeg": quality, **meta}) + "\n")


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
