"""The sprays: a sheet breaking up into ligaments and streaked droplets, and a mist, as
layers of cover over the frame."""

from __future__ import annotations

import math

import cv2
import numpy as np

from photo_drawer.common import Rng, crop_of, smooth_noise
from photo_drawer.layout import Look, Nozzle


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
