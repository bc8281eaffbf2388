"""`render_sample`: one synthetic spray image with its exact ground truth."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from spraycv.config.render import RenderConfig
from spraycv.data.synth.appearance import spray_density, spray_roi
from spraycv.data.synth.background import background
from spraycv.data.synth.camera import apply_camera
from spraycv.data.synth.envelope import band, envelope_mask, measure
from spraycv.data.synth.layout import sample_scene
from spraycv.data.synth.params import NozzleParams, SceneParams
from spraycv.data.synth.scene import draw_hardware

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
    """

    image: np.ndarray
    mask: np.ndarray
    instances: np.ndarray
    record: dict[str, Any]


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


def ground_truth(scene: SceneParams, body: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Each nozzle's own envelope mask (bool, (H, W)) and the instance map (uint8)."""
    h, w = scene.height, scene.width
    owns, inst = [], np.zeros((h, w), np.uint8)
    best = np.full((h, w), np.inf, np.float32)
    for nz in scene.nozzles:
        if nz.state == "off":
            owns.append(np.zeros((h, w), bool))
            continue
        own = envelope_mask(nz.envelope, h, w) & ~body
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


def compose(
    scene: SceneParams,
    rng_scene: np.random.Generator,
    rng_spray: np.random.Generator,
    rng_camera: np.random.Generator,
    seed: int,
    sample_id: str,
) -> RenderResult:
    """Render a sampled scene: background, hardware, sprays, camera; plus ground truth."""
    h, w = scene.height, scene.width
    px = min(h, w) / 512.0
    img = background(rng_scene, scene)
    body = draw_hardware(img, scene, rng_scene)
    owns, inst = ground_truth(scene, body)
    dens = np.zeros((h, w), np.float32)
    box = [h, 0, w, 0]  # union of the plumes' regions: lighting only needs to run there
    for nz, own in zip(scene.nozzles, owns, strict=True):
        roi = spray_roi(nz, h, w) if nz.state != "off" else None
        if roi is None:
            continue
        y0, y1, x0, x1 = roi
        dens[y0:y1, x0:x1] += spray_density(rng_spray, nz, roi, scene.streak_px, int(own.sum()), px)
        box = [min(box[0], y0), max(box[1], y1), min(box[2], x0), max(box[3], x1)]
    if box[1] > box[0]:
        _light(img, dens, scene, box)
    image = apply_camera(img, scene.camera, scene.color, rng_camera, scene.white_balance)
    nozzles = [_nozzle_record(nz, own) for nz, own in zip(scene.nozzles, owns, strict=True)]
    mask = np.zeros((h, w), np.uint8)
    for nz, own in zip(nozzles, owns, strict=True):
        if nz["visible"]:
            mask[own] = 1
    render = asdict(scene)
    render.pop("nozzles")
    for key in ("width", "height", "lighting", "color"):
        render.pop(key)
    record = {
        "id": sample_id,
        "seed": int(seed),
        "width": w,
        "height": h,
        "lighting": scene.lighting,
        "color": scene.color,
        "nozzles": nozzles,
        "render": render,
    }
    return RenderResult(image=image, mask=mask, instances=inst, record=jsonable(record))


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
    rng_geo, rng_scene, rng_spray, rng_cam = streams(seed)
    scene = sample_scene(rng_geo, width, height, config)
    return compose(scene, rng_scene, rng_spray, rng_cam, seed, sample_id or f"synth-{seed}")
