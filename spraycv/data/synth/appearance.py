"""What a plume looks like: liquid sheet, ligaments, droplets, mist and haze.

Each nozzle is rendered as a float "spray density" map over a region of interest; the
compositor turns density into light (front-lit: scattered light, back-lit: attenuation).
All appearance terms are computed in spray coordinates (`envelope.unwarp`), so they bend
with the envelope and fade near its ragged front, where an annotator stops outlining.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from spraycv.data.synth.envelope import EnvelopeSpec, front_radius_at, polygon, unwarp, warp
from spraycv.data.synth.noise import big_blur, smooth_noise_1d, smooth_noise_2d, smoothstep
from spraycv.data.synth.params import NozzleParams

Roi = tuple[int, int, int, int]  # y0, y1, x0, x1
_TABLE = 2048  # samples of the across-spray 1-D textures


def spray_roi(nz: NozzleParams, height: int, width: int) -> Roi | None:
    """Bounding box of the envelope plus room for mist, clipped; None if off-image."""
    p = polygon(nz.envelope)
    pad = 0.12 * nz.envelope.length + 4
    x0, y0 = np.floor(p.min(axis=0) - pad).astype(int)
    x1, y1 = np.ceil(p.max(axis=0) + pad).astype(int)
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1 + 1, width), min(y1 + 1, height)
    return (y0, y1, x0, x1) if x1 > x0 and y1 > y0 else None


def _profile(kind: str, q: np.ndarray, rim: float) -> np.ndarray:
    """Across-spray liquid distribution at normalised position q (edges at +-1)."""
    aq = np.abs(q)
    edge = np.exp(-(((1.0 - aq) / 0.08) ** 2))
    if kind == "flat_fan":
        return 0.6 + rim * edge
    if kind == "hollow_cone":
        # Projected thin conical shell: path length ~ 1 / sqrt(1 - q^2): bright edges.
        return 0.3 / np.sqrt(np.maximum(1.0 - q * q, 0.05)) + 0.3 * rim * edge
    return np.sqrt(np.maximum(1.0 - q * q, 0.0)) * (0.5 + 0.7 * np.exp(-q * q / 0.15))


def _sample_q(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    """Across-spray positions of n droplets, with a few strays just outside the edges."""
    if kind == "flat_fan":
        q = rng.uniform(-1.0, 1.0, n)
        edge = rng.random(n) < 0.15
        q[edge] = np.sign(q[edge]) * rng.uniform(0.85, 1.0, int(edge.sum()))
    elif kind == "hollow_cone":
        q = np.sin(np.pi * (rng.random(n) - 0.5)) * rng.uniform(0.9, 1.0, n)
    else:
        q = np.clip(rng.normal(0.0, 0.42, n), -1.0, 1.0)
    stray = rng.random(n) < 0.05
    q[stray] = np.sign(q[stray] + 1e-9) * rng.uniform(0.97, 1.12, int(stray.sum()))
    return q


def _splat(shape: tuple[int, int], x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Bilinear splat of point weights (ROI coordinates) into a new (H, W) float32 layer."""
    h, wd = shape
    x0, y0 = np.floor(x).astype(np.int64), np.floor(y).astype(np.int64)
    fx, fy = x - x0, y - y0
    xi = np.concatenate([x0, x0 + 1, x0, x0 + 1])
    yi = np.concatenate([y0, y0, y0 + 1, y0 + 1])
    wk = np.concatenate([(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy])
    wk *= np.tile(w, 4)
    ok = (xi >= 0) & (xi < wd) & (yi >= 0) & (yi < h)
    acc = np.bincount(yi[ok] * wd + xi[ok], weights=wk[ok], minlength=h * wd)
    return acc.reshape(h, wd).astype(np.float32)


def _droplets(
    rng: np.random.Generator, nz: NozzleParams, roi: Roi, streak_px: float, area_px: int, px: float
) -> np.ndarray:
    """Resolved droplets (and their motion streaks) as a density map of the ROI."""
    spec, kind = nz.envelope, nz.nozzle_type
    y0, y1, x0, x1 = roi
    # Smaller plumes are farther away: more droplets per pixel of envelope.
    per_px = 0.02 * float(np.clip(400.0 * px / spec.length, 1.0, 4.0))
    n = int(min(5000 * px * px, nz.density * area_px * per_px))
    if n <= 0:
        return np.zeros((y1 - y0, x1 - x0), np.float32)
    beta = nz.breakup_frac
    cand = 3 * n
    t = 1.35 * np.sqrt(rng.random(cand))  # pdf ~ t: spray area grows with distance
    keep = rng.random(cand) < smoothstep(0.55 * beta, 1.3 * beta, t) * smoothstep(1.12, 0.8, t)
    t = t[keep][:n]
    n = t.size
    q = _sample_q(rng, kind, n)
    al, ar = math.radians(spec.half_left_deg), math.radians(spec.half_right_deg)
    phi = (al - ar) / 2 + q * (al + ar) / 2
    r = t * front_radius_at(spec, phi)
    pts = warp(spec, r * np.cos(phi), r * np.sin(phi))
    radius = nz.drop_radius * np.exp(rng.normal(0.0, 0.45, n)) * (0.7 + 0.6 * t)
    bright = np.minimum(rng.exponential(0.45, n), 1.6) * np.sqrt(radius / nz.drop_radius)
    # Motion streaks: droplets fly radially from the apex during the exposure.
    k = max(1, math.ceil(streak_px * 1.2))  # sub-samples ~1 px apart: solid streaks
    d = pts - np.asarray(spec.apex)
    d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-6)
    length = streak_px * rng.uniform(0.6, 1.2, (n, 1))
    out = np.zeros((y1 - y0, x1 - x0), np.float32)
    for lo, hi, sigma in ((0.0, 0.9, 0.55), (0.9, 1.8, 1.0), (1.8, 1e9, 1.9)):
        sel = (radius >= lo * px) & (radius < hi * px)
        if not sel.any():
            continue
        s = sigma * px
        w = bright[sel] * 2 * math.pi * s * s * (1.0 + 0.2 * (k - 1)) / k
        offs = np.linspace(-0.5, 0.5, k) if k > 1 else np.zeros(1)
        p = pts[sel][None] + offs[:, None, None] * (length[sel] * d[sel])[None]  # (k, m, 2)
        layer = _splat(out.shape, p[..., 0].ravel() - x0, p[..., 1].ravel() - y0, np.tile(w, k))
        out += cv2.GaussianBlur(layer, (0, 0), max(s, 0.4))
    return out


def _ligaments(rng: np.random.Generator, nz: NozzleParams, roi: Roi, px: float) -> np.ndarray:
    """Ligaments torn from the sheet near breakup (flat-fan rims, cone edges)."""
    spec, kind = nz.envelope, nz.nozzle_type
    y0, y1, x0, x1 = roi
    layer = np.zeros((y1 - y0, x1 - x0), np.uint8)
    al, ar = math.radians(spec.half_left_deg), math.radians(spec.half_right_deg)
    edge_frac = {"flat_fan": 0.5, "hollow_cone": 0.7, "full_cone": 0.2}[kind]
    n = round(nz.n_ligaments * float(np.clip(spec.length / (300.0 * px), 0.3, 1.5)))
    if n == 0:
        return layer.astype(np.float32)
    q0 = rng.uniform(-1.0, 1.0, n)
    edge = rng.random(n) < edge_frac
    q0[edge] = np.copysign(rng.uniform(0.85, 0.99, int(edge.sum())), q0[edge])
    t0 = nz.breakup_frac * rng.uniform(0.6, 1.15, n)
    ts = t0[:, None] + np.linspace(0.0, 1.0, 6)[None, :] * rng.uniform(0.02, 0.1, (n, 1))
    qs = np.clip(q0[:, None] + np.cumsum(rng.normal(0.0, 0.012, (n, 6)), axis=1), -1.0, 1.0)
    phi = (al - ar) / 2 + qs * (al + ar) / 2
    r = ts * front_radius_at(spec, phi)
    pts = np.round((warp(spec, r * np.cos(phi), r * np.sin(phi)) - (x0, y0)) * 16).astype(np.int32)
    values = rng.integers(60, 220, n)
    for p, v in zip(pts, values, strict=True):
        cv2.polylines(layer, [p], False, int(v), 1, cv2.LINE_AA, shift=4)
    return layer.astype(np.float32) / 255.0


@dataclass(frozen=True)
class _PlumeCoords:
    """Per-pixel coordinates of a ROI in a plume's unwarped frame, each (h, w) float32:
    radius r, across-spray position q (-1..1 between the sides), radius t over the front's,
    and d_in, the signed distance (px) to the nearer side (positive inside the wedge)."""

    r: np.ndarray
    q: np.ndarray
    t: np.ndarray
    d_in: np.ndarray


def _plume_coords(spec: EnvelopeSpec, roi: Roi) -> _PlumeCoords:
    y0, y1, x0, x1 = roi
    xs = np.arange(x0, x1, dtype=np.float32)[None, :]
    ys = np.arange(y0, y1, dtype=np.float32)[:, None]
    a, l = unwarp(spec, xs, ys)  # noqa: E741
    r = np.hypot(a, l)
    phi = np.arctan2(l, a)
    al, ar = math.radians(spec.half_left_deg), math.radians(spec.half_right_deg)
    q = (phi - (al - ar) / 2) / ((al + ar) / 2)
    t = r / front_radius_at(spec, phi)
    d_in = np.minimum(
        r * np.sin(np.clip(al - phi, -1.5, 1.5)), r * np.sin(np.clip(phi + ar, -1.5, 1.5))
    )
    d_in = np.where(a > 0, d_in, -r)
    return _PlumeCoords(r, q, t, d_in)


def _sheet(
    rng: np.random.Generator, nz: NozzleParams, c: _PlumeCoords, li: np.ndarray, px: float
) -> np.ndarray:
    """The liquid sheet's density (h, w): smooth, radially striated, breaking up at a
    ragged distance. li: (h, w) each pixel's index into the across-spray tables."""
    h, w = c.r.shape
    beta = nz.breakup_frac
    prof = _profile(nz.nozzle_type, np.clip(c.q, -1.0, 1.0), nz.rim)
    # Across-spray textures are 1-D: tabulate them once, look them up per pixel.
    grid = np.linspace(0.0, 1.0, _TABLE, dtype=np.float32)
    brk = (beta * (1.0 + 0.25 * smooth_noise_1d(rng, 6, grid)))[li]
    n_striae = int(rng.integers(40, 140))
    striae = (1.0 + nz.streak_contrast * smooth_noise_1d(rng, n_striae, grid))[li]
    holes = smoothstep(0.3, 1.2, smooth_noise_2d(rng, h, w, max(h, w) / (10 * px)))
    t = c.t
    sheet_fade = smoothstep(brk, 0.7 * brk, t) * (1.0 - holes * smoothstep(0.5 * brk, brk, t))
    edge = np.clip(c.d_in + 0.5, 0.0, 1.0)
    return 1.3 * prof * (1.0 - 0.4 * t / beta) * striae * sheet_fade * edge


def _cloud(
    rng: np.random.Generator,
    nz: NozzleParams,
    c: _PlumeCoords,
    li: np.ndarray,
    px: float,
) -> np.ndarray:
    """Unresolved fine droplets' density (h, w): cloudy, soft-edged, thinning out towards
    the front."""
    kind, beta, t = nz.nozzle_type, nz.breakup_frac, c.t
    h, w = c.r.shape
    grid = np.linspace(0.0, 1.0, _TABLE, dtype=np.float32)
    cloud_prof = (
        _profile(kind, np.clip(c.q, -1.0, 1.0), 0.3 * nz.rim) if kind != "flat_fan" else 1.0
    )
    tex = 1.0 + 0.6 * smooth_noise_2d(rng, h, w, max(h, w) / (25 * px), octaves=3)
    # Droplet streams along rays: strong in sheet sprays, washed out by full-cone turbulence.
    amp = 0.12 if kind == "full_cone" else 0.35
    streams = (1.0 + amp * smooth_noise_1d(rng, int(rng.integers(15, 50)), grid))[li]
    soft = 1.0 / (1.0 + np.exp(-c.d_in / (0.7 + 0.025 * c.r)))
    cloud = (
        cloud_prof
        * tex
        * streams
        * soft
        * smoothstep(0.6 * beta, 1.5 * beta, t)
        * smoothstep(1.1, 0.7, t)
        / (0.4 + t)
    )
    far = float(np.clip((300.0 * px / nz.envelope.length) ** 0.5, 1.0, 2.0))  # unresolved mist
    return np.maximum(cloud, 0.0) * (0.3 * nz.density * far * (2.0 if kind == "full_cone" else 1.0))


def spray_density(
    rng: np.random.Generator,
    nz: NozzleParams,
    roi: Roi,
    streak_px: float,
    area_px: int,
    px: float,
) -> np.ndarray:
    """Spray density of one plume over `roi`, (y1 - y0, x1 - x0) float32, ~0..2.

    Args:
        area_px: the plume's envelope area (sets the droplet count).
        px: the spray's pixel scale (SceneParams.spray_px: image size / 512, less for a
            camera further away).
    """
    spec, kind = nz.envelope, nz.nozzle_type
    c = _plume_coords(spec, roi)
    li = (np.clip((c.q + 1.0) * 0.5, 0.0, 1.0) * (_TABLE - 1)).astype(np.int32)
    sheet = _sheet(rng, nz, c, li, px)
    cloud = _cloud(rng, nz, c, li, px)
    beta = nz.breakup_frac
    drops = _droplets(rng, nz, roi, streak_px, area_px, px)
    ligs = _ligaments(rng, nz, roi, px) if kind != "full_cone" or beta > 0.05 else 0.0
    dens = sheet * 0.9 + cloud + drops + 0.45 * ligs
    haze = big_blur(dens.astype(np.float32), 0.06 * spec.length + 2.0)
    dens = dens + nz.haze * 0.6 * haze
    return (dens * nz.brightness).astype(np.float32)
