"""Analytic spray masks with known geometry, for tests and benchmarks.

A wedge is drawn on pixel centres: pixel p belongs to it when the angle of p - apex from the
axis lies in [-half_right, +half_left] (positive towards n_left = (-uy, ux)) and |p - apex| is
within the far end. Boundaries are exactly straight out to `straight_frac` of the radius.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class WedgeSpec:
    """One analytic plume: apex (x, y), tilt (deg, atan2(ux, uy)), half-angles (deg), radius.

    The bend starts at the axial distance straight_frac * radius; keep the corners of
    wide sprays beyond 0.5 L with flatness > 0, as the renderer does (docs/cone_angle.md).
    """

    apex: tuple[float, float]
    tilt_deg: float
    half_left_deg: float
    half_right_deg: float
    radius: float
    ragged: float = 0.0  # relative amplitude of the far end's raggedness
    bend_deg: float = 0.0  # how far the boundaries bend beyond straight_frac (deg at the tip)
    straight_frac: float = 0.6
    seed: int = 0
    flatness: float = 0.0  # far front r = radius / cos(phi) ** flatness: 0 arc, 1 flat

    @property
    def axis(self) -> tuple[float, float]:
        a = math.radians(self.tilt_deg)
        return (math.sin(a), math.cos(a))

    @property
    def included_deg(self) -> float:
        return self.half_left_deg + self.half_right_deg


def _grid(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.mgrid[0 : shape[0], 0 : shape[1]]
    return xs.astype(np.float64), ys.astype(np.float64)


def draw_wedge(shape: tuple[int, int], spec: WedgeSpec) -> np.ndarray:
    """(H, W) uint8 {0, 1} mask of one plume."""
    xs, ys = _grid(shape)
    ux, uy = spec.axis
    dx, dy = xs - spec.apex[0], ys - spec.apex[1]
    s = dx * ux + dy * uy
    t = -dx * uy + dy * ux
    r = np.hypot(s, t)
    phi = np.degrees(np.arctan2(t, s))
    # bending beyond straight_frac (axial): both edges open quadratically (drag-like)
    over = np.clip(s / spec.radius - spec.straight_frac, 0.0, None) / (1.0 - spec.straight_frac)
    bend = spec.bend_deg * over**2
    inside = (phi <= spec.half_left_deg + bend) & (phi >= -spec.half_right_deg - bend)
    cosphi = np.cos(np.radians(np.clip(phi, -89.0, 89.0)))
    far = spec.radius / cosphi**spec.flatness
    if spec.ragged > 0:
        rng = np.random.default_rng(spec.seed)
        k = np.arange(1, 9)
        amp = rng.normal(0, 1, 8) / k
        ph = rng.uniform(0, 2 * np.pi, 8)
        ang = np.radians(phi)[..., None] * k * 4
        wobble = (amp * np.sin(ang + ph)).sum(axis=-1)
        far = far * (1.0 + spec.ragged * wobble / np.abs(amp).sum())
    return (inside & (r <= far)).astype(np.uint8)


def draw_plumes(shape: tuple[int, int], specs: Sequence[WedgeSpec]) -> np.ndarray:
    """(H, W) uint8 {0, 1} union of several plumes."""
    out = np.zeros(shape, dtype=np.uint8)
    for spec in specs:
        out |= draw_wedge(shape, spec)
    return out


def true_length(shape: tuple[int, int], spec: WedgeSpec) -> float:
    """L = max over the plume's pixels of (p - apex) . axis (docs/cone_angle.md)."""
    m = draw_wedge(shape, spec).astype(bool)
    xs, ys = _grid(shape)
    s = (xs - spec.apex[0]) * spec.axis[0] + (ys - spec.apex[1]) * spec.axis[1]
    return float(s[m].max()) if m.any() else float("nan")


def add_droplets(
    mask: np.ndarray,
    n: int,
    seed: int = 0,
    radius: tuple[int, int] = (1, 3),
    margin_px: float = 12.0,
) -> np.ndarray:
    """Copy of mask (H, W) with n droplets (discs) scattered within margin_px of the plume."""
    rng = np.random.default_rng(seed)
    out = mask.copy()
    dist = cv2.distanceTransform((1 - mask).astype(np.uint8), cv2.DIST_L2, 3)
    ys, xs = np.nonzero((dist > 1.5) & (dist < margin_px))
    if xs.size == 0:
        return out
    pick = rng.integers(0, xs.size, n)
    for i in pick:
        r = int(rng.integers(radius[0], radius[1] + 1))
        cv2.circle(out, (int(xs[i]), int(ys[i])), r, 1, -1)
    return out


def add_ligaments(
    mask: np.ndarray, n: int, seed: int = 0, length: tuple[int, int] = (4, 12)
) -> np.ndarray:
    """Copy of mask with n short 1-2 px thick ligaments sticking out of its boundary."""
    rng = np.random.default_rng(seed)
    out = mask.copy()
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return out
    pts = np.concatenate([c.reshape(-1, 2) for c in contours])
    cy, cx = np.nonzero(mask)
    centre = np.array([cx.mean(), cy.mean()])
    for i in rng.integers(0, len(pts), n):
        p = pts[i].astype(float)
        d = p - centre
        d = d / max(np.hypot(*d), 1e-9)
        ang = rng.normal(0, 0.5)
        c, sn = math.cos(ang), math.sin(ang)
        d = np.array([c * d[0] - sn * d[1], sn * d[0] + c * d[1]])
        q = p + d * rng.integers(length[0], length[1] + 1)
        thick = int(rng.integers(1, 3))
        cv2.line(out, (int(p[0]), int(p[1])), (round(q[0]), round(q[1])), 1, thick)
    return out
