"""Parameters of one synthetic scene, and the sampling of its non-geometric parts.

Geometry (angles, lengths, placement) is sampled in `layout.py`; this module holds the
dataclasses and the appearance, body and camera parameters. Colours are BGR in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spraycv.config.render import AppearanceConfig, CameraConfig
from spraycv.data.synth.envelope import EnvelopeSpec

Color = tuple[float, float, float]

# ISO 10625 tip colours by flow size (BGR), plus bare metal tips.
ISO_COLORS: dict[str, Color] = {
    "01": (0.10, 0.45, 0.95),
    "015": (0.20, 0.55, 0.15),
    "02": (0.10, 0.80, 0.90),
    "025": (0.75, 0.50, 0.70),
    "03": (0.75, 0.35, 0.10),
    "04": (0.15, 0.15, 0.80),
    "05": (0.15, 0.30, 0.45),
    "06": (0.45, 0.45, 0.45),
    "08": (0.85, 0.85, 0.85),
    "steel": (0.62, 0.62, 0.60),
    "brass": (0.30, 0.60, 0.72),
}
CAP_COLORS: tuple[Color, ...] = (
    (0.08, 0.08, 0.08),
    (0.25, 0.25, 0.25),
    (0.10, 0.10, 0.65),
    (0.55, 0.30, 0.10),
    (0.10, 0.70, 0.80),
    (0.15, 0.45, 0.15),
    (0.60, 0.60, 0.60),
)
HOLDER_COLORS: tuple[Color, ...] = (
    (0.06, 0.06, 0.06),
    (0.18, 0.18, 0.18),
    (0.30, 0.55, 0.65),
    (0.50, 0.50, 0.50),
)


@dataclass
class BodyParams:
    """Nozzle body drawn upstream of the apex (lengths along -axis, widths across), px."""

    tip_len: float
    tip_w0: float  # width at the orifice
    tip_w1: float
    cap_len: float
    cap_w: float
    holder_len: float
    holder_w: float
    tip_color: Color
    cap_color: Color
    holder_color: Color
    iso_size: str
    shape: str = "bayonet"  # one of spraycv.config.render.BODY_SHAPES
    gloss: float = 1.0  # scales the specular stripes: matte plastic < 1 < polished metal


@dataclass
class NozzleParams:
    """One nozzle: geometry (exact envelope), state and appearance."""

    index: int
    nozzle_type: str
    state: str
    envelope: EnvelopeSpec
    nominal_included_deg: float
    breakup_frac: float  # sheet breakup distance / L
    density: float  # droplet density multiplier
    drop_radius: float  # median droplet radius, px
    haze: float
    brightness: float
    rim: float  # flat-fan rim / hollow-cone edge emphasis
    streak_contrast: float  # radial striations of the sheet
    n_ligaments: int
    body: BodyParams


@dataclass
class CameraParams:
    """Optics and sensor effects."""

    defocus_sigma: float
    motion_px: float
    motion_angle_deg: float
    exposure_gain: float
    gamma: float
    vignetting: float
    vignette_center: tuple[float, float]  # fraction of (width, height)
    read_noise: float
    shot_noise: float
    jpeg_quality: int  # 0 = no JPEG round trip


@dataclass
class SceneParams:
    """Everything needed to render one frame (besides the per-frame random streams)."""

    width: int
    height: int
    lighting: str  # "front" | "back"
    color: bool
    background: str  # one of spraycv.config.render.BACKGROUNDS
    camera_roll_deg: float
    gravity_dir: tuple[float, float]
    boom: dict[str, object]
    streak_px: float  # droplet motion streak length (exposure time)
    spray_color: Color
    light_angle_deg: float  # direction the front light comes from, in the image
    light_falloff: float
    bg_level: float
    bg_color: Color
    spray_gain: float  # front-lit: brightness of dense spray; back-lit: its optical depth
    white_balance: Color
    clutter: bool  # rods, lamps, tiles in the background
    fixtures: bool  # brackets and specular glints near a nozzle
    camera: CameraParams
    spray_px: float  # the sprays' own pixel scale (droplets, streaks, mist; `px` x
    # appearance.spray_scale), while the camera's blurs and the hardware follow `px`
    nozzles: list[NozzleParams] = field(default_factory=list)


def ur(rng: np.random.Generator, r: tuple[float, float]) -> float:
    """Uniform in the range r = (low, high)."""
    return float(rng.uniform(r[0], r[1]))


def pick(rng: np.random.Generator, probs: dict[str, float]) -> str:
    """One key of `probs`, drawn with the given (unnormalised) weights."""
    keys = sorted(probs)
    p = np.array([probs[k] for k in keys], dtype=np.float64)
    return keys[int(rng.choice(len(keys), p=p / p.sum()))]


def _bayonet(rng: np.random.Generator, w: float) -> BodyParams:
    """A coloured tip in a ribbed bayonet cap on a holder (the renderer v1 body)."""
    iso = str(rng.choice(list(ISO_COLORS)))
    return BodyParams(
        tip_len=w * ur(rng, (0.35, 0.9)),
        tip_w0=w * ur(rng, (0.3, 0.55)),
        tip_w1=w * ur(rng, (0.6, 0.85)),
        cap_len=w * ur(rng, (0.45, 0.9)),
        cap_w=w,
        holder_len=w * ur(rng, (0.7, 1.8)),
        holder_w=w * ur(rng, (0.7, 1.05)),
        tip_color=ISO_COLORS[iso],
        cap_color=CAP_COLORS[int(rng.integers(len(CAP_COLORS)))],
        holder_color=HOLDER_COLORS[int(rng.integers(len(HOLDER_COLORS)))],
        iso_size=iso,
    )


def _tip_only(rng: np.random.Generator, w: float) -> BodyParams:
    """A tip screwed onto a bare threaded stem, as on test rigs: no cap, a narrow stem."""
    iso = str(rng.choice(list(ISO_COLORS)))
    tip_w1 = w * ur(rng, (0.6, 0.95))
    stem = (ISO_COLORS["steel"], ISO_COLORS["brass"], HOLDER_COLORS[0])[int(rng.integers(3))]
    return BodyParams(
        tip_len=w * ur(rng, (0.5, 1.2)),
        tip_w0=w * ur(rng, (0.25, 0.55)),
        tip_w1=tip_w1,
        cap_len=0.0,
        cap_w=tip_w1,
        holder_len=w * ur(rng, (0.6, 2.0)),
        holder_w=tip_w1 * ur(rng, (0.5, 0.85)),
        tip_color=ISO_COLORS[iso],
        cap_color=stem,
        holder_color=stem,
        iso_size=iso,
        shape="tip_only",
        gloss=ur(rng, (0.5, 1.3)),
    )


def _one_piece(rng: np.random.Generator, w: float) -> BodyParams:
    """One moulded or machined piece in one colour, often matte, without cap ribs."""
    iso = str(rng.choice(list(ISO_COLORS)))
    plastics: tuple[Color, ...] = (ISO_COLORS[iso], CAP_COLORS[0], (0.85, 0.85, 0.82))
    color = plastics[int(rng.integers(len(plastics)))]
    return BodyParams(
        tip_len=w * ur(rng, (0.3, 0.8)),
        tip_w0=w * ur(rng, (0.3, 0.6)),
        tip_w1=w * ur(rng, (0.7, 1.0)),
        cap_len=w * ur(rng, (0.4, 1.2)),
        cap_w=w,
        holder_len=w * ur(rng, (0.3, 1.5)),
        holder_w=w * ur(rng, (0.55, 1.0)),
        tip_color=color,
        cap_color=color,
        holder_color=color,
        iso_size=iso,
        shape="one_piece",
        gloss=ur(rng, (0.15, 0.9)),
    )


BODY_SAMPLERS = {"bayonet": _bayonet, "tip_only": _tip_only, "one_piece": _one_piece}


def sample_body(
    rng: np.random.Generator,
    scale: float,
    max_width: float,
    shape_probs: dict[str, float] | None = None,
) -> BodyParams:
    """A nozzle body `scale` px wide (cap), no wider than `max_width`.

    The shape is drawn only when `shape_probs` allows more than one, so that a config with
    one shape keeps the random stream (and the frames) of renderer v1.
    """
    shapes = [k for k, p in (shape_probs or {"bayonet": 1.0}).items() if p > 0]
    shape = pick(rng, shape_probs) if len(shapes) > 1 else shapes[0]  # type: ignore[arg-type]
    return BODY_SAMPLERS[shape](rng, min(scale, max_width))


def sample_appearance(
    rng: np.random.Generator, nozzle_type: str, state: str, cfg: AppearanceConfig, px: float
) -> dict[str, float | int]:
    """Per-nozzle appearance; `px` is the spray's pixel scale (SceneParams.spray_px)."""
    weak = state in ("weak", "clogged")
    breakup = {"flat_fan": (0.12, 0.4), "hollow_cone": (0.08, 0.3), "full_cone": (0.02, 0.08)}
    rim = {"flat_fan": (0.3, 1.2), "hollow_cone": (1.0, 2.5), "full_cone": (0.0, 0.2)}
    ligs = {"flat_fan": (15, 60), "hollow_cone": (15, 50), "full_cone": (4, 16)}
    return {
        "breakup_frac": ur(rng, breakup[nozzle_type]) * (1.5 if weak else 1.0),
        "density": ur(rng, cfg.droplet_density_range) * (0.5 if weak else 1.0),
        "drop_radius": ur(rng, (0.35, 1.0)) * px * (1.5 if weak else 1.0),
        "haze": ur(rng, cfg.haze_range) * (0.5 if weak else 1.0),
        "brightness": ur(rng, (0.6, 1.2)),
        "rim": ur(rng, rim[nozzle_type]),
        "streak_contrast": ur(rng, (0.1, 0.6)),
        "n_ligaments": int(rng.integers(*ligs[nozzle_type])),
    }


def sample_camera(rng: np.random.Generator, cfg: CameraConfig, px: float) -> CameraParams:
    """Camera effects; blur sizes scale with the image (`px` = size / 512)."""
    q = int(rng.integers(cfg.jpeg_quality_range[0], cfg.jpeg_quality_range[1] + 1))
    return CameraParams(
        defocus_sigma=ur(rng, cfg.defocus_sigma_range) * px
        if rng.random() < cfg.prob_defocus
        else 0.0,
        motion_px=ur(rng, cfg.motion_blur_px_range) * px
        if rng.random() < cfg.prob_motion_blur
        else 0.0,
        motion_angle_deg=ur(rng, (0.0, 180.0)),
        # Mostly well exposed, sometimes far off: mean of two uniforms (triangular).
        exposure_gain=float(
            2.0 ** ((ur(rng, cfg.exposure_log2_range) + ur(rng, cfg.exposure_log2_range)) / 2)
        ),
        gamma=ur(rng, cfg.gamma_range),
        vignetting=ur(rng, cfg.vignetting_range),
        vignette_center=(ur(rng, (0.35, 0.65)), ur(rng, (0.35, 0.65))),
        read_noise=ur(rng, cfg.read_noise_range),
        shot_noise=ur(rng, cfg.shot_noise_range),
        jpeg_quality=q if rng.random() < cfg.prob_jpeg else 0,
    )


def sample_lighting(
    rng: np.random.Generator, cfg: AppearanceConfig, px: float
) -> dict[str, object]:
    """Scene lighting, colour mode, background style and spray colour."""
    back = bool(rng.random() < cfg.prob_back_lit)
    background = "panel" if back else pick(rng, cfg.front_background_probs)
    if rng.random() < cfg.prob_dyed:
        tints = ((1.0, 0.55, 0.35), (0.5, 1.0, 0.6), (0.45, 0.6, 1.0))
        spray = tints[int(rng.integers(len(tints)))]
    else:
        t = ur(rng, (-0.08, 0.08))  # cool to warm white
        spray = (1.0 + t, 1.0, 1.0 - t)
    if back:
        level, color = ur(rng, (0.6, 0.97)), (ur(rng, (0.9, 1.0)), 1.0, ur(rng, (0.9, 1.0)))
    elif background == "lab":
        level = float(rng.choice([ur(rng, (0.01, 0.08)), ur(rng, (0.08, 0.25))], p=[0.7, 0.3]))
        palettes = ((1.0, 1.0, 1.0), (1.0, 0.85, 0.7), (0.8, 0.95, 0.8), (0.7, 0.85, 1.0))
        color = palettes[int(rng.integers(len(palettes)))]
    else:
        level, color = ur(rng, (0.3, 0.6)), (1.0, 1.0, 1.0)
    return {
        "lighting": "back" if back else "front",
        "color": bool(rng.random() < cfg.prob_color),
        "background": background,
        "streak_px": 0.0 if rng.random() < cfg.prob_frozen else ur(rng, cfg.streak_px_range) * px,
        "spray_color": tuple(float(c) for c in spray),
        "light_angle_deg": ur(rng, (-180.0, 180.0)),
        "light_falloff": ur(rng, (0.0, 0.5)),
        "bg_level": level,
        "bg_color": tuple(float(c) for c in color),
        "spray_gain": ur(rng, (1.5, 4.0))
        if back
        else ur(rng, (0.6, 1.3)) * (1.0 if background == "lab" else 0.7),
        "white_balance": tuple(ur(rng, (0.9, 1.1)) for _ in range(3)),
        "clutter": bool(rng.random() < cfg.prob_clutter),
        "fixtures": bool(rng.random() < cfg.prob_fixtures),
    }
