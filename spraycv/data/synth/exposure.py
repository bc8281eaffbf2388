"""Exposure styles: long-exposure (averaged) spray, under-exposed 8-bit and 10-12-bit cameras.

The sensors here replace `camera.sensor_8bit` for a frame; they take the light on the
sensor from `camera.optics` and return the 8-bit image plus, for high-bit-depth cameras,
the raw frame as written to a 16-bit file.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from spraycv.data.synth.camera import as_three_channels, sensor_8bit, sensor_noise
from spraycv.data.synth.noise import big_blur
from spraycv.data.synth.params import ur
from spraycv.data.synth.style_context import StyleContext


def average_density(ctx: StyleContext, dens: np.ndarray) -> np.ndarray:
    """Mean of many frames: droplets and ligaments wash out into a smooth cone."""
    sigma = ur(ctx.rng, ctx.cfg.averaged_blur_px_range) * ctx.spray_px
    ctx.params["average_blur_px"] = round(sigma, 3)
    return big_blur(dens, sigma)


def sheet_density(ctx: StyleContext, dens: np.ndarray) -> np.ndarray:
    """Long exposure of a dense spray: droplets and ligaments wash out into a smooth sheet,
    yet its edge stays crisp (the envelope does not flicker). The density is averaged only
    over the spraying envelopes (a normalised blur), so the sheet keeps its level up to
    the edge, and is cut there with an anti-aliased edge: the truth is unchanged."""
    sigma = ur(ctx.rng, ctx.cfg.sheet_blur_px_range) * ctx.spray_px
    ctx.params["sheet_blur_px"] = round(sigma, 3)
    inside = ctx.spraying.astype(np.float32)
    level = big_blur(dens * inside, sigma) / np.maximum(big_blur(inside, sigma), 1e-3)
    edge = cv2.GaussianBlur(inside, (0, 0), 0.6 * ctx.px)
    return (level * edge).astype(np.float32)


def dim_sensor(
    ctx: StyleContext, light: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, None]:
    """Under-exposed 8-bit frame: the brightest pixel at most `peak` (of 255).

    Exposure is lowered (never raised) until the brightest point of the scene lands a
    little below `peak`, so nothing saturates and noise and quantisation weigh more; the
    few noise or JPEG overshoots above `peak` are clipped to it.
    """
    cam = ctx.scene.camera
    peak = int(ur(ctx.rng, ctx.cfg.dim_peak_range))
    target = 0.9 * (peak / 255.0) ** cam.gamma
    top = float(light.max())
    if top > target:
        light = light * np.float32(target / top)
    ctx.params["peak"] = peak
    return np.minimum(sensor_8bit(light, cam, ctx.scene.color, rng), np.uint8(peak)), None


def _to_8bit(raw: np.ndarray, bits: int, stretch: bool) -> np.ndarray:
    """What camera software writes as 8 bits: a percentile stretch with a display gamma,
    or the top 8 bits of the data (dim when the data does not use the full range)."""
    if not stretch:
        return (raw >> (bits - 8)).astype(np.uint8)
    lo, hi = np.percentile(raw, (0.5, 99.9))
    v = np.clip((raw.astype(np.float32) - lo) / max(float(hi - lo), 1.0), 0.0, 1.0)
    return np.round(v ** np.float32(1 / 2.2) * 255.0).astype(np.uint8)


def hdr_sensor(
    ctx: StyleContext, light: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A 10-12-bit high-speed camera: linear raw data, no tone curve, no JPEG.

    The exposure puts the scene's brightest point at `level` of full scale (log-uniform:
    often far below it, sometimes above, clipping the highlights). Returns the 8-bit copy
    and the raw frame in a 16-bit container, LSB-aligned (0 .. 2**bits - 1) or MSB-aligned
    (shifted to the top of 16 bits), as cameras write either.
    """
    cfg = ctx.cfg
    bits = int(ctx.rng.choice(cfg.hdr_bits))
    lo, hi = cfg.hdr_level_range
    level = math.exp(ur(ctx.rng, (math.log(max(lo, 1e-4)), math.log(max(hi, 1e-4)))))
    msb = bool(ctx.rng.random() < cfg.prob_hdr_msb_aligned)
    stretch = bool(ctx.rng.random() < cfg.prob_hdr_stretch)
    full = 2**bits - 1
    light = light * np.float32(level / max(float(light.max()), 1e-6))
    # Big pixels, deep wells: a few counts of read noise and little shot noise.
    read, shot = ur(ctx.rng, (0.5, 4.0)) / full, ur(ctx.rng, (0.002, 0.01))
    raw = np.clip(sensor_noise(light, read, shot, rng), 0.0, 1.0)
    raw = np.round(raw * full).astype(np.uint16)
    ctx.params.update(
        bits=bits, level=round(level, 4), msb_aligned=msb, to_8bit="stretch" if stretch else "shift"
    )
    image16 = raw << np.uint16(16 - bits) if msb else raw
    return as_three_channels(_to_8bit(raw, bits, stretch)), as_three_channels(image16)
