"""A translucent liquid sheet near the orifice, rippled by waves.

The renderer's own sheet is the densest part of a plume: the brightest part of a front-lit
spray and the darkest of a back-lit one. A real sheet is a thin film of clear liquid. It
scatters far less light than the droplets it breaks into, so next to the orifice a spray
can look fainter than further out (lighter than the droplets in a back-lit frame, greyer in
a front-lit one), and the film is rippled by waves that run outwards from the orifice
(arcs around the apex) until it breaks up. Up close the plume is then told from the
background by its faint, rippled film, not by a dense one.

Only the light the spray scatters is scaled, never its envelope: the truth stays exact. The
film keeps at least `sheet_opacity_range[0] * (1 - sheet_wave_depth_range[1])` of its light
at a trough and its opacity on average, so it stays visible (StyleConfig checks the ranges).
"""

from __future__ import annotations

import math

import numpy as np

from spraycv.data.synth.envelope import EnvelopeSpec
from spraycv.data.synth.params import ur
from spraycv.data.synth.style_context import StyleContext
from spraycv.data.synth.sunlight import across_spray, with_light_scaled

_SIDE_MARGIN = 1.3  # the film's gain reaches this far across the wedge (q), past its sides
_BREAKUP_BLEND = 0.5  # the gain returns to 1 over this share of the breakup distance beyond it


def film_gain(
    env: EnvelopeSpec,
    breakup_px: float,
    shape: tuple[int, int],
    opacity: float,
    depth: float,
    wavelength_px: float,
    phase: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(gain, where): the (H, W) float32 factor on one spraying nozzle's scattered light, and
    the (H, W) bool part of the frame it applies to (the wedge, widened, up to the end of its
    blend past breakup). gain = opacity * (1 + depth * sin(2 pi r / wavelength + phase)) on
    the film (r: distance from the apex), blending to 1 beyond `breakup_px`."""
    q, s = across_spray(env, *shape)
    ys, xs = np.indices(shape, dtype=np.float32)
    r = np.hypot(xs - np.float32(env.apex[0]), ys - np.float32(env.apex[1]))
    end = breakup_px * (1.0 + _BREAKUP_BLEND)
    where = (s > 0) & (np.abs(q) <= _SIDE_MARGIN) & (r < end)
    film = opacity * (1.0 + depth * np.sin(np.float32(2 * math.pi / wavelength_px) * r + phase))
    blend = np.clip((r - breakup_px) / max(end - breakup_px, 1e-3), 0.0, 1.0)
    blend = blend * blend * (3.0 - 2.0 * blend)  # smoothstep: no seam at breakup
    gain = (film * (1.0 - blend) + blend).astype(np.float32)
    return gain, where


def translucent_sheet_density(ctx: StyleContext, dens: np.ndarray) -> np.ndarray:
    """Each spraying nozzle's film (`film_gain`), one opacity, wave depth and wavelength (a
    share of the nozzle's length, at least 3 px) drawn for the frame, a phase per nozzle.
    Where two films overlap a pixel takes the fainter gain."""
    opacity = ur(ctx.rng, ctx.cfg.sheet_opacity_range)
    depth = ur(ctx.rng, ctx.cfg.sheet_wave_depth_range)
    frac = ur(ctx.rng, ctx.cfg.sheet_wavelength_frac_range)
    ctx.params.update(
        sheet_opacity=round(opacity, 4), sheet_wave_depth=round(depth, 4),
        sheet_wavelength_frac=round(frac, 4),
    )  # fmt: skip
    gain = np.ones(ctx.shape, np.float32)
    for nz in ctx.scene.nozzles:
        if nz.state == "off":
            continue
        env = nz.envelope
        wavelength, phase = max(3.0, frac * env.length), ur(ctx.rng, (0.0, 2 * math.pi))
        breakup = nz.breakup_frac * env.length
        g, where = film_gain(env, breakup, ctx.shape, opacity, depth, wavelength, phase)
        gain[where] = np.minimum(gain[where], g[where])
    return with_light_scaled(dens, gain)
