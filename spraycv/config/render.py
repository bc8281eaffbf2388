"""Defaults of the synthetic spray renderer: every distribution and probability it samples.

`RenderConfig` is the single source of the renderer's defaults (`spraycv.data.synth`).
Ranges are `(low, high)` pairs sampled uniformly unless a field says otherwise; angles are
in degrees, lengths as fractions of the image size (the shorter side) unless named `_px`.
"""

from __future__ import annotations

import functools
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator, model_validator

from spraycv.config.base import StrictModel

NOZZLE_TYPES = ("flat_fan", "hollow_cone", "full_cone")
NOZZLE_STATES = ("on", "weak", "clogged", "off")
BACKGROUNDS = ("lab", "panel", "field", "canopy")
# Nozzle bodies: a tip in a bayonet cap on a holder; a tip on a bare threaded stem; one
# moulded or machined piece (spraycv.data.synth.params.BODY_SAMPLERS draws each).
BODY_SHAPES = ("bayonet", "tip_only", "one_piece")
# Named looks of a frame (spraycv.data.synth.styles maps each to its effects). "standard" is
# the renderer's own look: a config that draws only it renders what renderer v1 rendered.
STYLES = (
    "standard",
    # hard negatives: bright things that are not spray
    "lit_hardware",
    "lit_clutter",
    "wet_reflections",
    "black_single",
    # real-camera conditions
    "dim",
    "hdr",
    "averaged",
    "averaged_dim",
    "long_exposure",
    "jpeg_heavy",
    "motion_blur",
    "vignetting",
    "lens_dust",
    # sunlight: one side of each spray lit more than the other; outdoors, over a crop
    "side_lit",
    "outdoor_sun",
    # a faint, rippled liquid sheet next to the orifice, in a booth or outdoors
    "translucent_sheet",
    "translucent_sheet_outdoor",
    # no spray at all: the truth is an empty mask
    "nozzles_off",
    "bare_background",
    "brackets_only",
)


def _check_range(value: tuple[float, float]) -> tuple[float, float]:
    lo, hi = value
    if hi < lo:
        raise ValueError(f"range low ({lo}) must not exceed high ({hi})")
    return value


def _check_probs(value: dict[str, float], keys: tuple[str, ...]) -> dict[str, float]:
    unknown = set(value) - set(keys)
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}; expected a subset of {keys}")
    if any(p < 0 for p in value.values()) or sum(value.values()) <= 0:
        raise ValueError("probabilities must be >= 0 and not all zero")
    return value


def _probs_over(keys: tuple[str, ...]) -> AfterValidator:
    return AfterValidator(functools.partial(_check_probs, keys=keys))


# The checked field types: a (low, high) pair with low <= high; {key: probability} with
# keys from a list, probabilities >= 0 and not all zero.
Range = Annotated[tuple[float, float], AfterValidator(_check_range)]
IntRange = Annotated[tuple[int, int], AfterValidator(_check_range)]
TypeProbs = Annotated[dict[str, float], _probs_over(NOZZLE_TYPES)]
StateProbs = Annotated[dict[str, float], _probs_over(NOZZLE_STATES)]
BackgroundProbs = Annotated[dict[str, float], _probs_over(BACKGROUNDS)]
BodyShapeProbs = Annotated[dict[str, float], _probs_over(BODY_SHAPES)]
StyleWeights = Annotated[dict[str, float], _probs_over(STYLES)]


class NozzleDistConfig(StrictModel):
    """How nozzles, their geometry and their layout on a boom are drawn."""

    type_probs: TypeProbs = Field(
        default_factory=lambda: {"flat_fan": 0.5, "hollow_cone": 0.25, "full_cone": 0.25}
    )
    # Catalogue angles are far more common than arbitrary ones; jitter blurs them.
    catalogue_angles_deg: list[float] = Field(
        default_factory=lambda: [15, 25, 40, 50, 65, 80, 90, 110, 120, 130]
    )
    prob_catalogue_angle: float = Field(0.6, ge=0, le=1)
    catalogue_jitter_deg: float = Field(6.0, ge=0)
    included_deg_range: Range = (10.0, 150.0)
    # Worn nozzles: |left - right| half-angle difference, drawn for a fraction of nozzles.
    prob_asymmetric: float = Field(0.5, ge=0, le=1)
    asymmetry_max_deg: float = Field(10.0, ge=0, le=20)
    min_half_angle_deg: float = Field(3.0, gt=0)
    # Nozzle tilt in the world frame: mostly straight down, sometimes tilted.
    prob_straight_down: float = Field(0.45, ge=0, le=1)
    straight_jitter_deg: float = Field(2.0, ge=0)
    tilt_deg_range: Range = (-35.0, 35.0)
    # Rotated camera: the whole image is rolled, so the axis can point sideways or up.
    prob_rotated_camera: float = Field(0.15, ge=0, le=1)
    camera_roll_deg_range: Range = (-180.0, 180.0)
    # Nozzles per frame: one with prob_single, else uniform in n_boom_range.
    prob_single: float = Field(0.45, ge=0, le=1)
    n_boom_range: tuple[int, int] = (2, 8)  # order and bounds checked in _consistent
    state_probs: StateProbs = Field(
        default_factory=lambda: {"on": 0.8, "weak": 0.08, "clogged": 0.07, "off": 0.05}
    )
    # Spray length L (axial extent) as a fraction of the image's shorter side.
    length_frac_range: Range = (0.3, 0.95)
    min_length_frac: float = Field(0.16, gt=0, lt=1)  # 82 px at 512: enough to measure
    length_jitter: float = Field(0.08, ge=0, lt=0.5)  # per nozzle on a boom
    weak_length_factor: Range = (0.55, 0.85)
    weak_angle_factor: Range = (0.7, 0.92)
    clogged_narrow_included_deg: Range = (10.0, 30.0)
    clogged_one_sided_half_deg: Range = (3.0, 7.0)
    # Boundaries are straight up to s_bend * L, then bend under gravity and drag.
    s_bend_frac_range: Range = (0.55, 0.85)
    prob_bend: float = Field(0.7, ge=0, le=1)
    gravity_range: Range = (0.0, 0.35)
    drag_range: Range = (0.0, 0.5)
    # The ragged far front: relative amplitude, and how flat it is (1 = flat, 0 = round).
    ragged_amp_range: Range = (0.015, 0.06)
    front_flatness_range: Range = (0.4, 1.0)
    apex_margin_frac: float = Field(0.05, ge=0, lt=0.5)
    body_width_frac_range: Range = (0.035, 0.085)  # nozzle cap width / image size
    # Only "bayonet" by default: a config that draws one shape renders what renderer v1 did.
    body_shape_probs: BodyShapeProbs = Field(default_factory=lambda: {"bayonet": 1.0})

    @model_validator(mode="after")
    def _consistent(self) -> NozzleDistConfig:
        lo, hi = self.included_deg_range
        if lo < 10.0 or hi > 150.0:
            raise ValueError("included_deg_range must lie within [10, 150]")
        if self.s_bend_frac_range[0] < 0.5:
            raise ValueError("s_bend_frac_range must start at >= 0.5 (straight beyond the band)")
        if not 1 <= self.n_boom_range[0] <= self.n_boom_range[1] <= 8:
            raise ValueError("n_boom_range must lie within [1, 8] and be ordered")
        if self.clogged_one_sided_half_deg[0] < self.min_half_angle_deg:
            raise ValueError("clogged_one_sided_half_deg must start at >= min_half_angle_deg")
        return self


class AppearanceConfig(StrictModel):
    """Lighting, background and spray appearance."""

    prob_back_lit: float = Field(0.3, ge=0, le=1)
    prob_color: float = Field(0.6, ge=0, le=1)
    # Background style of front-lit scenes ("panel" is used for every back-lit scene):
    # a dark lab, a field under the horizon, or a sunlit crop or soil seen from above.
    front_background_probs: BackgroundProbs = Field(
        default_factory=lambda: {"lab": 0.8, "field": 0.2}
    )
    prob_clutter: float = Field(0.6, ge=0, le=1)  # rods, lamps, tiles, stands
    prob_fixtures: float = Field(0.7, ge=0, le=1)  # brackets, specular glints
    prob_feed_pipe: float = Field(0.6, ge=0, le=1)  # single nozzle: supply pipe/hose
    # Droplet motion streaks in px (long exposure); 0 with prob_frozen (strobe/flash).
    prob_frozen: float = Field(0.5, ge=0, le=1)
    streak_px_range: Range = (2.0, 12.0)
    droplet_density_range: Range = (0.5, 2.2)
    haze_range: Range = (0.1, 1.0)
    prob_dyed: float = Field(0.1, ge=0, le=1)
    # A spray's own pixel scale (droplet size, motion streaks, mist, long-exposure wash) as
    # a share of the frame's (size / 512). Below 1 for a camera further away, whose sprays,
    # bodies and droplets all shrink together (configs/render/far_view.overrides); at 1 a
    # far view drew 2.5 x too large droplets for its sprays, a saturated blob whose visible
    # edge lay outside the truth (docs/experiments.md, row 166).
    spray_scale: float = Field(1.0, gt=0, le=1)


class CameraConfig(StrictModel):
    """Optics and sensor effects, applied after the scene is composed."""

    prob_defocus: float = Field(0.4, ge=0, le=1)
    defocus_sigma_range: Range = (0.6, 2.2)
    prob_motion_blur: float = Field(0.15, ge=0, le=1)
    motion_blur_px_range: Range = (2.0, 9.0)
    # Gain 2**x, x the mean of two uniform draws in the range: under and over exposure, rarer
    # at the extremes. Back-lit and field scenes are exposed relative to their background.
    exposure_log2_range: Range = (-1.2, 1.0)
    gamma_range: Range = (0.8, 1.25)
    vignetting_range: Range = (0.0, 0.55)
    read_noise_range: Range = (0.002, 0.03)  # Gaussian sigma, fraction of full scale
    shot_noise_range: Range = (0.0, 0.03)  # sigma at full scale, scales with sqrt(signal)
    prob_jpeg: float = Field(0.7, ge=0, le=1)
    jpeg_quality_range: IntRange = (35, 95)


class StyleConfig(StrictModel):
    """Which named styles a dataset mixes (weights) and the ranges their effects draw from.

    A style changes only how a frame looks and which nozzles spray, never the envelope of a
    spraying nozzle; each frame's style is drawn from its own random stream, so a frame of
    style "standard" is the frame the default config renders for the same seed.
    """

    weights: StyleWeights = Field(default_factory=lambda: {"standard": 1.0})
    # Hard negatives. Prop brightness is relative to the scene's spray brightness.
    n_brackets_range: IntRange = (1, 3)
    bracket_size_frac_range: Range = (0.08, 0.4)  # longest side / image size
    n_clutter_range: IntRange = (1, 4)
    clutter_size_frac_range: Range = (0.04, 0.45)
    prop_level_range: Range = (0.6, 1.8)
    body_light_gain_range: Range = (1.6, 3.5)  # lit nozzle bodies, caps and pipes
    reflection_strength_range: Range = (0.12, 0.45)
    black_level_range: Range = (0.0, 0.012)  # background of "black_single"
    # Real-camera conditions.
    dim_peak_range: Range = (30.0, 80.0)  # brightest pixel of a dim frame, of 255
    hdr_bits: list[int] = Field(default_factory=lambda: [10, 12])
    hdr_level_range: Range = (0.04, 1.3)  # brightest point / full scale (> 1: highlights clip)
    prob_hdr_msb_aligned: float = Field(0.5, ge=0, le=1)  # 16-bit container: data << (16 - bits)
    prob_hdr_stretch: float = Field(0.5, ge=0, le=1)  # 8-bit copy stretched, else bits shifted
    prob_mono: float = Field(0.8, ge=0, le=1)  # high-speed cameras are mostly monochrome
    averaged_blur_px_range: Range = (2.0, 6.0)
    averaged_gain_range: Range = (0.2, 0.6)  # faint: spray brightness factor
    sheet_blur_px_range: Range = (6.0, 16.0)  # long exposure: droplets washed into a sheet
    heavy_jpeg_quality_range: IntRange = (4, 20)
    strong_motion_px_range: Range = (8.0, 30.0)
    strong_vignetting_range: Range = (0.55, 0.9)
    n_dust_range: IntRange = (3, 25)
    # Sunlight from one side: the light a spray scatters scaled by 1 + k q across it (q -1
    # at one side, +1 at the other; spraycv.data.synth.sunlight), k drawn here. Below 1, so
    # the dim side stays visible.
    side_light_range: Range = (0.25, 0.6)
    # A translucent sheet (spraycv.data.synth.sheet): the light the film next to the orifice
    # scatters, times opacity * (1 + depth * sin(2 pi r / wavelength)), the wavelength a share
    # of the spray's length. Its trough keeps opacity * (1 - depth) > 0: the film stays visible.
    sheet_opacity_range: Range = (0.2, 0.65)
    sheet_wave_depth_range: Range = (0.25, 0.6)
    sheet_wavelength_frac_range: Range = (0.015, 0.05)

    @field_validator("hdr_bits")
    @classmethod
    def _bits(cls, v: list[int]) -> list[int]:
        if not v or any(not 9 <= b <= 16 for b in v):
            raise ValueError("hdr_bits must be a non-empty list of bit depths in [9, 16]")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> StyleConfig:
        if self.dim_peak_range[0] < 1 or self.dim_peak_range[1] > 255:
            raise ValueError("dim_peak_range must lie within [1, 255]")
        if not 1 <= self.heavy_jpeg_quality_range[0] <= self.heavy_jpeg_quality_range[1] <= 100:
            raise ValueError("heavy_jpeg_quality_range must lie within [1, 100]")
        if not 0.0 <= self.side_light_range[0] <= self.side_light_range[1] < 1.0:
            raise ValueError("side_light_range must lie within [0, 1)")
        if not 0.0 < self.sheet_opacity_range[0] <= self.sheet_opacity_range[1] <= 1.0:
            raise ValueError("sheet_opacity_range must lie within (0, 1]")
        if not 0.0 <= self.sheet_wave_depth_range[0] <= self.sheet_wave_depth_range[1] < 1.0:
            raise ValueError("sheet_wave_depth_range must lie within [0, 1)")
        if not 0.0 < self.sheet_wavelength_frac_range[0] <= self.sheet_wavelength_frac_range[1]:
            raise ValueError("sheet_wavelength_frac_range must be positive")
        return self


class RenderConfig(StrictModel):
    """Every default of the synthetic renderer (`spraycv synth`)."""

    nozzle: NozzleDistConfig = Field(default_factory=NozzleDistConfig)
    appearance: AppearanceConfig = Field(default_factory=AppearanceConfig)
    camera: CameraConfig = Field(default_factory=CameraConfig)
    styles: StyleConfig = Field(default_factory=StyleConfig)
