"""Where the nozzles are: one on a stem or a boom of several, their cones, the frame's
sizes, and how the frame's sprays look."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from photo_drawer.common import Rng, unit

SIZES = ((640, 480), (800, 600), (1024, 768), (1280, 720), (1024, 1024), (720, 1280))
SIZE_P = (0.2, 0.2, 0.2, 0.2, 0.12, 0.08)
KINDS = ("flat_fan", "hollow_cone", "full_cone")
KIND_P = (0.55, 0.25, 0.2)
INCLUDED = {"flat_fan": (20.0, 120.0), "hollow_cone": (40.0, 90.0), "full_cone": (30.0, 90.0)}


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
