"""Named styles: hard negatives, real-camera conditions and frames without spray.

A style is a tuple of effects (`STYLE_EFFECTS`); an effect (`EFFECTS`) hooks into one or
more stages of the renderer:

    config   RenderConfig overrides, deep-merged before the scene is drawn
    scene    the sampled scene (nozzle states, colours, camera settings)
    behind   radiance before the hardware is drawn (props the hardware may hide)
    spray    the spray density map
    light    radiance beside the spray, given its density (reflections)
    lens     radiance after the spray is lit (dust on the lens)
    sensor   replaces the 8-bit sensor (dim and high-bit-depth cameras)

Effects change how a frame looks and which nozzles spray, never the envelope of a spraying
nozzle, so the truth stays exact. Every effect draws from its own random streams, derived
from the frame's seed: effects without `config` overrides keep the scene of the "standard"
frame of the same seed (a dim frame is its standard twin under-exposed), and a "standard"
frame is byte-identical to what the renderer drew before styles existed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from spraycv.config.loader import merge
from spraycv.config.render import RenderConfig, StyleConfig
from spraycv.data.synth.exposure import average_density, dim_sensor, hdr_sensor, sheet_density
from spraycv.data.synth.params import BodyParams, Color, SceneParams, pick, ur
from spraycv.data.synth.props import (
    paint_brackets,
    paint_lens_dust,
    paint_lit_clutter,
    paint_reflection,
    paint_wet_surfaces,
)
from spraycv.data.synth.sheet import translucent_sheet_density
from spraycv.data.synth.style_context import StyleContext
from spraycv.data.synth.sunlight import side_lit_density

_STYLE_KEY = 0x57E1E5  # seeds the styles' own streams, apart from the renderer's four

SceneHook = Callable[[SceneParams, np.random.Generator, StyleConfig], SceneParams]
PaintHook = Callable[[StyleContext, np.ndarray], None]
SprayHook = Callable[[StyleContext, np.ndarray], np.ndarray]
LightHook = Callable[[StyleContext, np.ndarray, np.ndarray], None]
SensorHook = Callable[
    [StyleContext, np.ndarray, np.random.Generator], tuple[np.ndarray, np.ndarray | None]
]


@dataclass(frozen=True)
class Effect:
    """One change to the standard look; see the module docstring for the stages."""

    config: dict[str, Any] = field(default_factory=dict)
    scene: SceneHook | None = None
    behind: PaintHook | None = None
    spray: SprayHook | None = None
    light: LightHook | None = None
    lens: PaintHook | None = None
    sensor: SensorHook | None = None
    draws_nozzles: bool = True  # False: no nozzle in the frame at all (record lists none)


def _switch_off(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    return replace(scene, nozzles=[replace(nz, state="off") for nz in scene.nozzles])


def _no_nozzles(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    """A rig or field without nozzles: stands, rails and lamps more often than not."""
    return replace(_switch_off(scene, rng, cfg), clutter=bool(rng.random() < 0.75))


def _lit(color: Color, gain: float, mix: float) -> Color:
    """A colour under a strong lamp: towards bright metal, then amplified (may saturate)."""
    return tuple(float(gain * (c + (0.75 - c) * mix)) for c in color)  # type: ignore[return-value]


def _light_up_bodies(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    """Nozzle tips, caps, holders and the pipe lit as brightly as the spray or more."""
    gain, mix = ur(rng, cfg.body_light_gain_range), ur(rng, (0.3, 0.8))

    def body(b: BodyParams) -> BodyParams:
        return replace(
            b,
            tip_color=_lit(b.tip_color, gain, mix),
            cap_color=_lit(b.cap_color, gain, mix),
            holder_color=_lit(b.holder_color, gain, mix),
        )

    boom = dict(scene.boom)
    boom["pipe_color"] = list(_lit(tuple(boom["pipe_color"]), gain, mix))  # type: ignore[arg-type]
    nozzles = [replace(nz, body=body(nz.body)) for nz in scene.nozzles]
    return replace(scene, nozzles=nozzles, boom=boom)


def _black_stage(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    """A lab with the room lights off: black cloth, only the nozzle is lit."""
    return replace(scene, bg_level=ur(rng, cfg.black_level_range), clutter=bool(rng.random() < 0.2))


def _mono(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    """High-speed cameras are mostly monochrome."""
    return replace(scene, color=scene.color and bool(rng.random() >= cfg.prob_mono))


def _averaged(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    """Mean of many frames: no streaks, a faint spray, little noise (it averages out)."""
    scene = _mono(scene, rng, cfg)
    cam = replace(
        scene.camera, read_noise=scene.camera.read_noise / 4, shot_noise=scene.camera.shot_noise / 4
    )
    gain = scene.spray_gain * ur(rng, cfg.averaged_gain_range)
    return replace(scene, streak_px=0.0, spray_gain=gain, camera=cam)


def _no_streaks(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    """A long exposure: no single droplet's streak stands out."""
    return replace(scene, streak_px=0.0)


def _heavy_jpeg(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    lo, hi = cfg.heavy_jpeg_quality_range
    return replace(scene, camera=replace(scene.camera, jpeg_quality=int(rng.integers(lo, hi + 1))))


def _strong_motion(scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig) -> SceneParams:
    """Camera shake or a moving boom: the whole frame smeared along one direction."""
    px = min(scene.width, scene.height) / 512.0
    cam = replace(
        scene.camera,
        motion_px=ur(rng, cfg.strong_motion_px_range) * px,
        motion_angle_deg=ur(rng, (0.0, 180.0)),
    )
    return replace(scene, camera=cam)


def _strong_vignetting(
    scene: SceneParams, rng: np.random.Generator, cfg: StyleConfig
) -> SceneParams:
    cam = replace(
        scene.camera,
        vignetting=ur(rng, cfg.strong_vignetting_range),
        vignette_center=(ur(rng, (0.25, 0.75)), ur(rng, (0.25, 0.75))),
    )
    return replace(scene, camera=cam)


_BLACK_CONFIG = {
    "appearance": {"prob_back_lit": 0.0, "front_background_probs": {"lab": 1.0, "field": 0.0}},
    "nozzle": {
        "prob_single": 1.0,
        "type_probs": {"flat_fan": 0.6, "hollow_cone": 0.2, "full_cone": 0.2},
    },
}

# Outdoors in the sun: sunlit ground seen from above, or a field under the horizon.
_OUTDOOR_CONFIG = {
    "appearance": {
        "prob_back_lit": 0.0,
        "front_background_probs": {"lab": 0.0, "field": 0.3, "canopy": 0.7},
    },
}

EFFECTS: dict[str, Effect] = {
    "bright_brackets": Effect(behind=paint_brackets),
    "lit_bodies": Effect(scene=_light_up_bodies),
    "lit_clutter": Effect(behind=paint_lit_clutter),
    "wet_surfaces": Effect(behind=paint_wet_surfaces, light=paint_reflection),
    "black_stage": Effect(config=_BLACK_CONFIG, scene=_black_stage),
    "under_exposed": Effect(sensor=dim_sensor),
    "high_bit_depth": Effect(scene=_mono, sensor=hdr_sensor),
    "averaged": Effect(scene=_averaged, spray=average_density),
    "sheet": Effect(scene=_no_streaks, spray=sheet_density),
    "heavy_jpeg": Effect(scene=_heavy_jpeg),
    "strong_motion_blur": Effect(scene=_strong_motion),
    "strong_vignetting": Effect(scene=_strong_vignetting),
    "lens_dust": Effect(lens=paint_lens_dust),
    "sun_side": Effect(spray=side_lit_density),
    "outdoors": Effect(config=_OUTDOOR_CONFIG),
    "translucent_film": Effect(spray=translucent_sheet_density),
    "nozzles_off": Effect(scene=_switch_off),
    "no_nozzles": Effect(scene=_no_nozzles, draws_nozzles=False),
}

STYLE_EFFECTS: dict[str, tuple[str, ...]] = {
    "standard": (),
    "lit_hardware": ("lit_bodies", "bright_brackets"),
    "lit_clutter": ("lit_clutter",),
    "wet_reflections": ("wet_surfaces",),
    "black_single": ("black_stage", "lit_bodies", "bright_brackets"),
    "dim": ("under_exposed",),
    "hdr": ("high_bit_depth",),
    "averaged": ("averaged",),
    "averaged_dim": ("averaged", "under_exposed"),
    "long_exposure": ("sheet",),
    "jpeg_heavy": ("heavy_jpeg",),
    "motion_blur": ("strong_motion_blur",),
    "vignetting": ("strong_vignetting",),
    "lens_dust": ("lens_dust",),
    "side_lit": ("sun_side",),
    "outdoor_sun": ("outdoors", "sun_side"),
    "translucent_sheet": ("translucent_film",),
    "translucent_sheet_outdoor": ("outdoors", "sun_side", "translucent_film"),
    "nozzles_off": ("nozzles_off",),
    "bare_background": ("no_nozzles",),
    "brackets_only": ("no_nozzles", "bright_brackets"),
}


@dataclass(frozen=True)
class Look:
    """A frame's style and its effects, in the order they apply."""

    name: str

    @property
    def effects(self) -> tuple[Effect, ...]:
        return tuple(EFFECTS[e] for e in STYLE_EFFECTS[self.name])

    @property
    def standard(self) -> bool:
        return not self.effects

    @property
    def draws_nozzles(self) -> bool:
        return all(e.draws_nozzles for e in self.effects)

    def hooks(self, stage: str) -> list[Callable[..., Any]]:
        """The effects' callables for one stage, in order."""
        return [fn for e in self.effects if (fn := getattr(e, stage)) is not None]


STANDARD = Look("standard")


def style_streams(seed: int) -> list[np.random.Generator]:
    """The styles' own generators: pick, scene, paint (apart from the renderer's streams)."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence([seed, _STYLE_KEY]).spawn(3)]


def pick_look(seed: int, cfg: StyleConfig) -> Look:
    """The frame's style, drawn with `cfg.weights` from the seed's own stream."""
    if {k for k, w in cfg.weights.items() if w > 0} == {"standard"}:
        return STANDARD
    return Look(pick(style_streams(seed)[0], cfg.weights))


def styled_config(config: RenderConfig, look: Look) -> RenderConfig:
    """`config` with the look's overrides (the same object when there are none)."""
    overrides: dict[str, Any] = {}
    for effect in look.effects:
        overrides = merge(overrides, effect.config)
    if not overrides:
        return config
    return RenderConfig.model_validate(merge(config.model_dump(), overrides))


def restyle_scene(scene: SceneParams, look: Look, seed: int, cfg: StyleConfig) -> SceneParams:
    """Apply the look's scene hooks (none for the standard look)."""
    rng = style_streams(seed)[1]
    for hook in look.hooks("scene"):
        scene = hook(scene, rng, cfg)
    return scene


def frame_style(record: dict[str, Any]) -> str:
    """The style of a labels.jsonl record ("standard" records carry no "style" field)."""
    return str(record.get("style", "standard"))
