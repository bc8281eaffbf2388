"""`render_sample`: one synthetic spray image with its exact ground truth."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from spraycv.config.render import RenderConfig, StyleConfig
from spraycv.data.synth.appearance import spray_density, spray_roi
from spraycv.data.synth.background import background
from spraycv.data.synth.camera import apply_camera, optics
from spraycv.data.synth.envelope import band, envelope_mask, measure
from spraycv.data.synth.layout import sample_scene
from spraycv.data.synth.params import NozzleParams, SceneParams
from spraycv.data.synth.scene import draw_hardware
from spraycv.data.synth.style_context import StyleContext
from spraycv.data.synth.styles import (
    STANDARD,
    Look,
    pick_look,
    restyle_scene,
    style_streams,
    styled_config,
)

# Bump whenever a change alters what a seed renders: held-out figures are comparable only
# between datasets of one version (docs/experiments.md records it with every experiment).
RENDERER_VERSION = 1


@dataclass
class RenderResult:
    """One rendered sample.

    Attributes:
        image: (H, W, 3) uint8 BGR (grayscale images have three equal channels).
        mask: (H, W) uint8 in {0, 1}, union of the visible nozzles' envelopes.
        instances: (H, W) uint8, 0 = background, k = nozzle index + 1 (overlaps go to the
            nozzle whose apex is nearer).
        record: JSON-serialisable ground truth (see `spraycv.data.synth`).
        image16: (H, W, 3) uint16 raw frame of a high-bit-depth style ("hdr"), as a 16-bit
            file holds it; None otherwise (`image` is then the only image).
    """

    image: np.ndarray
    mask: np.ndarray
    instances: np.ndarray
    record: dict[str, Any]
    image16: np.ndarray | None = None


def jsonable(obj: Any) -> Any:
    """Plain Python types (lists, floats, ints) for JSON, recursively."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | np.ndarray):
        return [jsonable(v) for v in obj]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return float(obj)
    return obj


def _nozzle_record(nz: NozzleParams, own: np.ndarray) -> dict[str, Any]:
    spec = nz.envelope
    gt = measure(own, spec.apex, spec.axis)
    visible = nz.state != "off" and gt["area_px"] > 0
    left = spec.half_left_deg if visible else 0.0
    right = spec.half_right_deg if visible else 0.0
    params = asdict(nz)
    for key in ("index", "nozzle_type", "state"):
        params.pop(key)
    params["straight_to_px"] = spec.s_bend  # both edges are exact lines up to here
    return {
        "index": nz.index,
        "nozzle_type": nz.nozzle_type,
        "state": nz.state,
        "visible": visible,
        "apex": list(spec.apex),
        "axis": list(spec.axis),
        "tilt_deg": math.degrees(math.atan2(spec.axis[0], spec.axis[1])),
        "half_angle_left_deg": left,
        "half_angle_right_deg": right,
        "included_angle_deg": left + right,
        "length_px": gt["length_px"],
        "area_px": gt["area_px"],
        "touches_border": gt["touches_border"],
        "band": band(gt["length_px"]),
        "params": params,
    }


def envelope_masks(scene: SceneParams) -> list[np.ndarray]:
    """Each nozzle's envelope mask (bool, (H, W)); all False for a nozzle that is off."""
    h, w = scene.height, scene.width
    return [
        envelope_mask(nz.envelope, h, w) if nz.state != "off" else np.zeros((h, w), bool)
        for nz in scene.nozzles
    ]


def ground_truth(
    scene: SceneParams, envelopes: list[np.ndarray], body: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray]:
    """Each nozzle's own mask (its envelope less the hardware in front of it, bool (H, W))
    and the instance map (uint8)."""
    h, w = scene.height, scene.width
    owns, inst = [], np.zeros((h, w), np.uint8)
    best = np.full((h, w), np.inf, np.float32)
    for nz, env in zip(scene.nozzles, envelopes, strict=True):
        if nz.state == "off":
            owns.append(env)
            continue
        own = env & ~body
        owns.append(own)
        rows, cols = np.nonzero(own)
        d = np.hypot(cols - nz.envelope.apex[0], rows - nz.envelope.apex[1]).astype(np.float32)
        win = d < best[rows, cols]
        inst[rows[win], cols[win]] = nz.index + 1
        best[rows[win], cols[win]] = d[win]
    return owns, inst


def _light(img: np.ndarray, dens: np.ndarray, scene: SceneParams, box: list[int]) -> None:
    """Add the spray to `img` (H, W, 3) in place, within box = [y0, y1, x0, x1]."""
    y0, y1, x0, x1 = box
    sub, d = img[y0:y1, x0:x1], dens[y0:y1, x0:x1]
    if scene.lighting == "back":  # shadowgraph: the spray attenuates the back light
        sub *= np.exp(-scene.spray_gain * d)[..., None]
        return
    h, w = scene.height, scene.width
    emission = 1.0 - np.exp(-1.8 * d)
    t = math.radians(scene.light_angle_deg)
    xs = np.arange(x0, x1, dtype=np.float32)[None, :] - w / 2
    ys = np.arange(y0, y1, dtype=np.float32)[:, None] - h / 2
    ramp = (xs * math.cos(t) + ys * math.sin(t)) / max(h, w) + 0.5
    # Light from one side: the far side of the spray scatters less.
    light = emission * (scene.spray_gain * (1.0 - scene.light_falloff * np.clip(ramp, 0.0, 1.0)))
    sub *= (1.0 - 0.3 * emission)[..., None]
    sub += light[..., None] * np.asarray(scene.spray_color, np.float32)


def _spray_density(
    scene: SceneParams, owns: list[np.ndarray], rng: np.random.Generator
) -> tuple[np.ndarray, list[int]]:
    """Summed spray density of the spraying nozzles, (H, W), and the box [y0, y1, x0, x1]
    around their regions (lighting only needs to run there; empty when none sprays)."""
    h, w = scene.height, scene.width
    px = scene.spray_px
    dens = np.zeros((h, w), np.float32)
    box = [h, 0, w, 0]
    for nz, own in zip(scene.nozzles, owns, strict=True):
        roi = spray_roi(nz, h, w) if nz.state != "off" else None
        if roi is None:
            continue
        y0, y1, x0, x1 = roi
        dens[y0:y1, x0:x1] += spray_density(rng, nz, roi, scene.streak_px, int(own.sum()), px)
        box = [min(box[0], y0), max(box[1], y1), min(box[2], x0), max(box[3], x1)]
    return dens, box


def _record(
    scene: SceneParams, owns: list[np.ndarray], seed: int, sample_id: str, look: Look
) -> dict[str, Any]:
    """The frame's ground truth record (JSON-ready after `jsonable`)."""
    nozzles = [_nozzle_record(nz, own) for nz, own in zip(scene.nozzles, owns, strict=True)]
    render = asdict(scene)
    render.pop("nozzles")
    for key in ("width", "height", "lighting", "color"):
        render.pop(key)
    record = {
        "id": sample_id,
        "seed": int(seed),
        "width": scene.width,
        "height": scene.height,
        "lighting": scene.lighting,
        "color": scene.color,
        "nozzles": nozzles if look.draws_nozzles else [],  # none in the frame, none listed
        "render": render,
    }
    if not look.standard:  # absent: "standard" (renderer v1 records stay byte-identical)
        record["style"] = look.name
    return record


def _expose(
    img: np.ndarray, scene: SceneParams, rng: np.random.Generator, look: Look, ctx: StyleContext
) -> tuple[np.ndarray, np.ndarray | None]:
    """The camera: the standard 8-bit sensor, or the look's own (last one wins)."""
    sensors = look.hooks("sensor")
    if not sensors:
        return apply_camera(img, scene.camera, scene.color, rng, scene.white_balance), None
    light = optics(img, scene.camera, scene.color, scene.white_balance)
    return sensors[-1](ctx, light, rng)


def compose(
    scene: SceneParams,
    rng_scene: np.random.Generator,
    rng_spray: np.random.Generator,
    rng_camera: np.random.Generator,
    seed: int,
    sample_id: str,
    look: Look = STANDARD,
    styles: StyleConfig | None = None,
) -> RenderResult:
    """Render a sampled scene: background, hardware, sprays, camera; plus ground truth.

    `look` adds its props, spray and sensor effects (`spraycv.data.synth.styles`); its
    hooks draw from the frame's own style stream, so the standard look draws exactly what
    it drew before styles existed.
    """
    h, w = scene.height, scene.width
    envelopes = envelope_masks(scene)
    spraying = np.logical_or.reduce(envelopes) if envelopes else np.zeros((h, w), bool)
    ctx = StyleContext(scene, styles or StyleConfig(), style_streams(seed)[2], spraying)
    img = background(rng_scene, scene)
    for paint in look.hooks("behind"):
        paint(ctx, img)
    body = draw_hardware(img, scene, rng_scene) if look.draws_nozzles else np.zeros((h, w), bool)
    owns, inst = ground_truth(scene, envelopes, body)
    dens, box = _spray_density(scene, owns, rng_spray)
    for change in look.hooks("spray"):
        dens = change(ctx, dens)
    for paint_beside in look.hooks("light"):
        paint_beside(ctx, img, dens)
    if box[1] > box[0]:
        _light(img, dens, scene, box)
    for paint in look.hooks("lens"):
        paint(ctx, img)
    image, image16 = _expose(img, scene, rng_camera, look, ctx)
    record = _record(scene, owns, seed, sample_id, look)
    if ctx.params:
        record["style_params"] = ctx.params
    mask = np.zeros((h, w), np.uint8)
    for own in owns:  # empty for nozzles that are off
        mask[own] = 1
    return RenderResult(image, mask, inst, jsonable(record), image16)


def streams(seed: int) -> list[np.random.Generator]:
    """Independent generators: geometry, scene (background/hardware), spray, camera."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)]


def render_sample(
    seed: int,
    size: int = 512,
    config: RenderConfig | None = None,
    *,
    height: int | None = None,
    sample_id: str | None = None,
) -> RenderResult:
    """Render one synthetic spray image and its exact ground truth.

    Args:
        seed: the only source of randomness; the same seed (and config) gives
            byte-identical image, masks and record.
        size: image width (and height unless `height` is given), px.
        config: distributions to sample from (defaults: `RenderConfig()`).
        height: image height if not square.
        sample_id: the record's "id" (default "synth-<seed>").
    """
    config = config or RenderConfig()
    width, height = int(size), int(height or size)
    look = pick_look(seed, config.styles)
    rng_geo, rng_scene, rng_spray, rng_cam = streams(seed)
    scene = sample_scene(rng_geo, width, height, styled_config(config, look))
    scene = restyle_scene(scene, look, seed, config.styles)
    sample_id = sample_id or f"synth-{seed}"
    return compose(scene, rng_scene, rng_spray, rng_cam, seed, sample_id, look, config.styles)
