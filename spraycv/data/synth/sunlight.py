"""Sunlight from one side: a spray scatters more light on the side that faces the sun.

A lamp in a booth lights a spray fairly evenly; the sun (or one lamp low at the side) lights
one side of each spray sheet more than the other, so one edge of the plume is bright and
the other dim. The light a spray scatters is scaled across it, never its envelope: the truth
stays exact, and the dim side keeps at least 1 - k of its light (k < 1), so it stays
visible. In a back-lit frame the same scaling deepens the shadow on one side: a sheet
denser on one side than the other.
"""

from __future__ import annotations

import math

import numpy as np

from spraycv.data.synth.envelope import EnvelopeSpec
from spraycv.data.synth.params import ur
from spraycv.data.synth.style_context import StyleContext


def across_spray(env: EnvelopeSpec, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(q, s): for each pixel of an (height, width) frame, its position across the envelope's
    straight wedge, q (-1 on the left side, +1 on the right, beyond outside), and its
    distance along the axis, s (px; <= 0 behind the apex). Both (height, width) float32."""
    x = np.arange(width, dtype=np.float32)[None, :] - np.float32(env.apex[0])
    y = np.arange(height, dtype=np.float32)[:, None] - np.float32(env.apex[1])
    ux, uy = (np.float32(v) for v in env.axis)
    s = x * ux + y * uy
    lateral = y * ux - x * uy  # along n_left = (-uy, ux); negative right of the axis
    half = np.where(
        lateral < 0,
        np.float32(math.tan(math.radians(env.half_right_deg))),
        np.float32(math.tan(math.radians(env.half_left_deg))),
    )
    q = -lateral / np.maximum(s * half, np.float32(1e-3))
    return q.astype(np.float32), s.astype(np.float32)


def side_lit_density(ctx: StyleContext, dens: np.ndarray) -> np.ndarray:
    """Scale each spraying nozzle's light by 1 + k * sun * q across its own wedge (q from
    `across_spray`, clipped to [-1, 1]); one sun for the frame (k, and sun = -1 or +1:
    which side is bright). Where sprays overlap, a pixel takes the nearest axis's q."""
    k = ur(ctx.rng, ctx.cfg.side_light_range)
    sun = float(ctx.rng.choice([-1.0, 1.0]))
    ctx.params.update(side_light=round(k, 4), sun_side=int(sun))
    h, w = ctx.shape
    nearest = np.full((h, w), np.inf, np.float32)
    gain = np.ones((h, w), np.float32)
    for nz in ctx.scene.nozzles:
        if nz.state == "off":
            continue
        q, s = across_spray(nz.envelope, h, w)
        closer = (s > 0) & (np.abs(q) < nearest)
        nearest[closer] = np.abs(q[closer])
        gain[closer] = 1.0 + k * sun * np.clip(q[closer], -1.0, 1.0)
    return with_light_scaled(dens, gain)


def with_light_scaled(dens: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """The density whose scattered light (1 - exp(-1.8 d), spraycv.data.synth.render) is
    `gain` times that of `dens`, up to 0.98 of full scatter: a dense spray's dim side dims
    as much as a thin one's (scaling the density would leave a saturated sheet as it was)."""
    light = np.minimum((1.0 - np.exp(-1.8 * dens)) * gain, 0.98)
    return (-np.log1p(-light) / 1.8).astype(np.float32)
