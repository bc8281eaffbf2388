"""Analytic masks for the geometry tests (wedges drawn on pixel centres, known geometry)."""

from __future__ import annotations

import math

import numpy as np

from spraycv.geometry.analytic import WedgeSpec, draw_plumes


def flat_for(half_deg: float) -> float:
    """Front flatness so that the corners reach >= 0.75 L, as the renderer draws them."""
    if half_deg <= 1:
        return 0.4
    k = 1.0 - math.log(0.75) / math.log(math.cos(math.radians(half_deg)))
    return float(np.clip(k, 0.4, 1.0))


def axis_of(tilt_deg: float) -> np.ndarray:
    t = math.radians(tilt_deg)
    return np.array([math.sin(t), math.cos(t)])


def wedge(
    size: int,
    tilt: float,
    half_left: float,
    half_right: float,
    length: float,
    apex: tuple[float, float] | None = None,
    seed: int = 0,
    bend: float = 4.0,
    ragged: float = 0.04,
) -> tuple[np.ndarray, WedgeSpec]:
    """(mask (size, size) uint8, spec) of one plume centred in the frame unless apex given."""
    u = axis_of(tilt)
    if apex is None:
        c = np.array([size / 2 - 0.3, size / 2 + 0.2]) - u * length * 0.45
        apex = (float(c[0]), float(c[1]))
    spec = WedgeSpec(
        apex, tilt, half_left, half_right, length, ragged=ragged, bend_deg=bend, seed=seed,
        flatness=flat_for(max(half_left, half_right)),
    )  # fmt: skip
    return draw_plumes((size, size), [spec]), spec


def boom(
    size: int,
    n: int,
    tilt: float,
    half_left: float,
    half_right: float,
    length: float,
    meet_frac: float,
) -> tuple[np.ndarray, list[WedgeSpec]]:
    """n parallel plumes on a boom across the axis; neighbours meet at meet_frac * length."""
    u = axis_of(tilt)
    b = np.array([-u[1], u[0]])
    tl, tr = math.tan(math.radians(half_left)), math.tan(math.radians(half_right))
    spacing = meet_frac * length * (tl + tr)
    centre = np.array([size / 2 + 0.25, size / 2 - 0.35]) - u * length * 0.4
    specs = []
    for i in range(n):
        a = centre + b * (i - (n - 1) / 2) * spacing
        specs.append(
            WedgeSpec(
                (float(a[0]), float(a[1])),
                tilt,
                half_left,
                half_right,
                length,
                ragged=0.04,
                bend_deg=3.0,
                seed=i,
                flatness=flat_for(max(half_left, half_right)),
            )
        )
    return draw_plumes((size, size), specs), specs


def nearest(measurements: list, apex: tuple[float, float]):
    """The measurement whose apex is nearest to the given point."""
    return min(
        measurements,
        key=lambda m: (
            math.hypot(m.apex[0] - apex[0], m.apex[1] - apex[1])
            if all(np.isfinite(m.apex))
            else math.inf
        ),
    )
