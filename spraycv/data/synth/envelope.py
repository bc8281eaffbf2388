"""The exact spray envelope of one nozzle: boundary curves, polygon, mask and ground truth.

Spray coordinates: `a` along the mounting axis `u` and `l` along `n_left = (-uy, ux)`, both
from the apex, in pixels. The unbent envelope is the wedge between the boundary rays at
`+half_left` and `-half_right` from the axis, closed by a ragged far front. A warp then
bends everything beyond the axial distance `s_bend` (gravity pulls along `gravity_dir`,
drag pulls towards the axis); before `s_bend` the warp is the identity, so both boundaries
are exactly straight from the apex out to `s_bend >= 0.5 L` (docs/cone_angle.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from spraycv.config.geometry import BandConfig
from spraycv.data.synth.raster import fill_polygon

_STEP_PX = 2.0  # polygon vertex spacing along curved parts


@dataclass(frozen=True)
class EnvelopeSpec:
    """Geometry of one plume (all lengths in pixels, angles in degrees)."""

    apex: tuple[float, float]
    axis: tuple[float, float]  # unit vector from the apex into the spray
    half_left_deg: float
    half_right_deg: float
    length: float  # axial distance of the (unragged) far front
    s_bend: float  # axial distance where bending starts
    gravity: float  # sideways displacement gravity * L * (e / L)**2, e = a - s_bend
    gravity_dir: tuple[float, float]  # unit vector of gravity in the image
    drag: float  # lateral contraction factor 1 - drag * (e / L)**2
    front_flatness: float  # 1: front perpendicular to the axis, 0: circular arc
    ragged: tuple[float, ...]  # relative radial offsets of the front, left to right

    @property
    def normal(self) -> tuple[float, float]:
        """n_left = (-uy, ux)."""
        return (-self.axis[1], self.axis[0])


def front_radius(spec: EnvelopeSpec, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Front position at `lam` in [0, 1] (0 = left corner, 1 = right corner).

    Returns:
        (phi, r): angles from the axis (radians, positive to the left) and radii, each (N,).
    """
    al, ar = math.radians(spec.half_left_deg), math.radians(spec.half_right_deg)
    phi = al - lam * (al + ar)
    ragged = np.interp(lam, np.linspace(0.0, 1.0, len(spec.ragged)), spec.ragged)
    r = spec.length / np.cos(phi) ** spec.front_flatness * (1.0 + ragged)
    return phi, r


def front_radius_at(spec: EnvelopeSpec, phi: np.ndarray) -> np.ndarray:
    """Front radius at angles `phi` (radians from the axis, any shape); clamps outside.

    Linear interpolation in a 1025-entry table: fast on whole images (appearance only; the
    mask uses the exact polygon).
    """
    al, ar = math.radians(spec.half_left_deg), math.radians(spec.half_right_deg)
    table = front_radius(spec, np.linspace(0.0, 1.0, 1025))[1].astype(np.float32)
    x = np.clip((al - phi) * np.float32(1024.0 / (al + ar)), 0.0, 1024.0)
    i = np.minimum(x.astype(np.int32), 1023)
    f = x - i
    return table[i] * (1.0 - f) + table[i + 1] * f


def warp(spec: EnvelopeSpec, a: np.ndarray, l: np.ndarray) -> np.ndarray:  # noqa: E741
    """Spray coordinates (any shape) to image points `(..., 2)` (x, y)."""
    ux, uy = spec.axis
    nx, ny = spec.normal
    L = spec.length
    e2 = (np.maximum(a - spec.s_bend, 0.0) / L) ** 2
    lw = l * (1.0 - spec.drag * e2)
    g = spec.gravity * L * e2
    x = spec.apex[0] + a * ux + lw * nx + g * spec.gravity_dir[0]
    y = spec.apex[1] + a * uy + lw * ny + g * spec.gravity_dir[1]
    return np.stack([x, y], axis=-1)


def unwarp(spec: EnvelopeSpec, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Image points (any shape) back to spray coordinates `(a, l)` (inverse of `warp`)."""
    ux, uy = spec.axis
    nx, ny = spec.normal
    dx, dy = x - spec.apex[0], y - spec.apex[1]
    a_img, l_img = dx * ux + dy * uy, dx * nx + dy * ny
    gu = spec.gravity_dir[0] * ux + spec.gravity_dir[1] * uy
    gn = spec.gravity_dir[0] * nx + spec.gravity_dir[1] * ny
    L = spec.length
    a = a_img
    if spec.gravity == 0.0 and spec.drag == 0.0:
        return a, l_img
    # Fixed point: the gravity term grows slowly with a (its slope is <= 2 * gravity * e / L).
    for _ in range(4):
        e2 = (np.maximum(a - spec.s_bend, 0.0) / L) ** 2
        a = a_img - spec.gravity * L * e2 * gu
    e2 = (np.maximum(a - spec.s_bend, 0.0) / L) ** 2
    l = (l_img - spec.gravity * L * e2 * gn) / (1.0 - spec.drag * e2)  # noqa: E741
    return a, l


def _edge(spec: EnvelopeSpec, phi: float, r_end: float) -> tuple[np.ndarray, np.ndarray]:
    """Spray coordinates of one boundary ray from the apex to radius `r_end`."""
    c = math.cos(phi)
    r_bend = spec.s_bend / c  # radius where the ray crosses a = s_bend
    if r_end <= r_bend:
        r = np.array([0.0, r_end])
    else:
        n = max(2, math.ceil((r_end - r_bend) / _STEP_PX))
        r = np.concatenate([[0.0], np.linspace(r_bend, r_end, n + 1)])
    return r * c, r * math.sin(phi)


def polygon(spec: EnvelopeSpec) -> np.ndarray:
    """The envelope as a closed polygon of image points, (N, 2) float (x, y).

    Apex, straight left edge (one segment up to `s_bend`), ragged front, right edge.
    """
    al, ar = math.radians(spec.half_left_deg), math.radians(spec.half_right_deg)
    # Front vertex spacing about _STEP_PX, always including the ragged control points.
    arc = spec.length * (al + ar) / max(math.cos(max(al, ar)), 0.05)
    n = int(np.clip(arc / _STEP_PX, 4 * len(spec.ragged), 4000))
    lam = np.union1d(np.linspace(0.0, 1.0, n), np.linspace(0.0, 1.0, len(spec.ragged)))
    phi, r = front_radius(spec, lam)
    a_l, l_l = _edge(spec, al, float(r[0]))
    a_r, l_r = _edge(spec, -ar, float(r[-1]))
    a = np.concatenate([a_l[:-1], r * np.cos(phi), a_r[::-1][1:-1]])
    l = np.concatenate([l_l[:-1], r * np.sin(phi), l_r[::-1][1:-1]])  # noqa: E741
    return warp(spec, a, l)


def envelope_mask(spec: EnvelopeSpec, height: int, width: int) -> np.ndarray:
    """(height, width) bool mask of the envelope (pixel centres inside the polygon)."""
    return fill_polygon(polygon(spec), height, width)


def ensure_straight(spec: EnvelopeSpec) -> EnvelopeSpec:
    """`spec` with `s_bend` raised, if needed, to at least half its max axial extent + 1 px.

    So both edges stay exactly straight to beyond 0.5 L, whatever the warp and the front do.
    """
    for _ in range(4):
        need = 0.5 * max_axial(spec) + 1.0
        if spec.s_bend >= need:
            break
        spec = replace(spec, s_bend=need)
    return spec


def max_axial(spec: EnvelopeSpec) -> float:
    """Largest axial coordinate of the (unclipped) envelope polygon, px."""
    p = polygon(spec) - np.asarray(spec.apex)
    return float((p @ np.asarray(spec.axis)).max())


def band(length_px: float, cfg: BandConfig | None = None) -> dict[str, float]:
    """The default measurement band for a plume of spray length `length_px`."""
    cfg = cfg or BandConfig()
    if length_px <= 0:
        return {"start_px": 0.0, "end_px": 0.0, "start_frac": 0.0, "end_frac": 0.0}
    start = max(cfg.start_frac * length_px, cfg.min_start_px)
    end = cfg.end_frac * length_px
    return {
        "start_px": float(start),
        "end_px": float(end),
        "start_frac": float(start / length_px),
        "end_frac": float(end / length_px),
    }


def measure(
    mask: np.ndarray, apex: tuple[float, float], axis: tuple[float, float]
) -> dict[str, float | int | bool]:
    """Ground truth measured on one plume's own mask, per docs/cone_angle.md.

    Args:
        mask: (H, W) bool mask of this plume alone (clipped to the image).

    Returns:
        `length_px` (max of (p - apex) . axis over mask pixels, 0 if empty), `area_px`,
        `touches_border`.
    """
    rows, cols = np.nonzero(mask)
    if rows.size == 0:
        return {"length_px": 0.0, "area_px": 0, "touches_border": False}
    proj = (cols - apex[0]) * axis[0] + (rows - apex[1]) * axis[1]
    border = bool(mask[0].any() or mask[-1].any() or mask[:, 0].any() or mask[:, -1].any())
    return {"length_px": float(proj.max()), "area_px": int(rows.size), "touches_border": border}
