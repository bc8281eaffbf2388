"""Defaults of the cone geometry (see docs/cone_angle.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from spraycv.config.base import StrictModel


class BandConfig(StrictModel):
    """Near-nozzle band, as distances along the axis from the apex, where boundaries are fitted.

    Fractions of the spray length by default; `start_px`/`end_px` or `start_mm`/`end_mm`
    (with a scale) override them when set.
    """

    start_frac: float = Field(0.10, ge=0.0, lt=1.0)
    end_frac: float = Field(0.40, gt=0.0, le=1.0)
    min_start_px: float = Field(4.0, ge=0.0)
    start_px: float | None = Field(None, ge=0.0)
    end_px: float | None = Field(None, gt=0.0)
    start_mm: float | None = Field(None, ge=0.0)
    end_mm: float | None = Field(None, gt=0.0)

    @model_validator(mode="after")
    def _ordered(self) -> BandConfig:
        if self.end_frac <= self.start_frac:
            raise ValueError(
                f"band end_frac ({self.end_frac}) must exceed start_frac ({self.start_frac})"
            )
        for unit in ("px", "mm"):
            lo, hi = getattr(self, f"start_{unit}"), getattr(self, f"end_{unit}")
            if (lo is None) != (hi is None):
                raise ValueError(f"set both start_{unit} and end_{unit}, or neither")
            if lo is not None and hi is not None and hi <= lo:
                raise ValueError(f"band end_{unit} ({hi}) must exceed start_{unit} ({lo})")
        return self


class MaskShapeConfig(StrictModel):
    """How the pipeline redraws its mask from its readings (spraycv.geometry.plume_shape):
    each trusted plume becomes the wedge between its fitted sides, out along each ray as far
    as the segmented component that holds the plume's axis; the segmented pixels within
    `margin_deg` outside the sides are dropped."""

    enabled: bool = True
    margin_deg: float = Field(8.0, ge=0.0, le=45.0, description="sector widening per side (deg)")
    ray_bin_deg: float = Field(1.0, gt=0.0, le=10.0, description="ray width for the front (deg)")
    front_window: int = Field(5, ge=1, le=41, description="rays in the front's median filter")
    # A ray near a side can leave the segmented plume through its side (a network draws the
    # far-field sides a little narrow as often as wide) and stop short of the front; so the
    # outer `edge_frac` of the rays on each side reach at least as far as the ray inside them.
    edge_frac: float = Field(
        0.25, ge=0.0, le=0.5, description="share of rays held out to the front"
    )


class GeometryConfig(StrictModel):
    """Defaults of `spraycv.geometry.measure_cones` (the single source of them).

    Morphology runs before the connected components: a closing of `close_px` joins
    near-touching droplets into the envelope, an opening of `open_px` (off by default: it
    blunts the tips of narrow jets, and the one-sided robust fit already ignores ligaments)
    removes hair-thin ligaments; 0 disables either. Components below the area floors are
    debris.
    """

    band: BandConfig = Field(default_factory=BandConfig)
    mask_shape: MaskShapeConfig = Field(default_factory=MaskShapeConfig)
    open_px: int = Field(0, ge=0, le=31, description="opening kernel size (px), 0 = off")
    close_px: int = Field(3, ge=0, le=31, description="closing kernel size (px), 0 = off")
    min_plume_area_px: int = Field(150, ge=1, description="smaller components are debris")
    min_plume_area_frac: float = Field(
        0.02, ge=0.0, lt=1.0, description="and so are those below this fraction of the largest"
    )
    min_edge_points: int = Field(8, ge=2, description="per side, inside the band")
    max_fit_rms_px: float = Field(1.5, gt=0.0, description="poor_fit above this inlier RMS")
    min_confidence: float = Field(
        0.5, ge=0.0, le=1.0, description="a reading less confident than this is unreliable"
    )
    min_inlier_frac: float = Field(0.6, gt=0.0, le=1.0, description="poor_fit below this")
    robust_fit: Literal["huber", "ransac"] = "huber"
    outlier_px: float = Field(3.0, gt=0.0, description="residual that makes a point an outlier")
    ransac_iterations: int = Field(100, ge=1)
    max_refits: int = Field(4, ge=1, description="apex -> band -> lines refits per plume")
    search_band: tuple[float, float] = Field(
        (0.08, 0.45), description="band (fractions of L) used to score apex/axis candidates"
    )
    merge_min_depth_px: float = Field(
        6.0, gt=0.0, description="crotch depth that splits a component into plumes"
    )
    merge_min_depth_frac: float = Field(
        0.03, ge=0.0, description="and as a fraction of the component's lateral extent"
    )
    boom_axis_tol_deg: float = Field(
        25.0, gt=0.0, le=90.0, description="plumes whose bisectors agree this well form a boom"
    )
    hint_apex_tol_px: float = Field(
        25.0, gt=0.0, description="a hint apex further than this from any plume: no_spray"
    )
    profile_step_px: float = Field(2.0, gt=0.0, description="width-profile sampling step")
    # Without hints, a plume whose far front is as straight as its sides (common in model
    # masks) reads as a wedge at a far corner too; most rigs spray downwards, so near-ties
    # are broken towards this direction. The penalty, in px of fit RMS, grows from 0 (along
    # it) to direction_prior_px (against it); 0 disables the prior.
    direction_prior: tuple[float, float] = (0.0, 1.0)
    direction_prior_px: float = Field(1.0, ge=0.0)
    # Likely apexes (MeasureHints.apex_prior, e.g. from a model's apex head) settle what the
    # mask alone cannot: a triangle-like plume reads as a wedge from any corner. A candidate
    # apex further than max(apex_prior_tol_px, apex_prior_tol_frac * plume extent) from every
    # likely apex is ranked as if its fit were this much worse (px); 0 disables it.
    apex_prior_px: float = Field(10.0, ge=0.0)
    apex_prior_tol_px: float = Field(12.0, gt=0.0)
    apex_prior_tol_frac: float = Field(0.15, ge=0.0, le=1.0)
    # A likely apex that a reading leaves unexplained costs apex_prior_px times its strength
    # (MeasureHints.apex_prior_strength) over this one, at most once: the apex head's peaks
    # at real nozzles mostly reach 0.6-0.95, its stray ones at far corners of plumes and on
    # fixtures 0.2-0.55 (docs/experiments.md, row 51).
    apex_prior_full_strength: float = Field(0.6, gt=0.0, le=1.0)

    @model_validator(mode="after")
    def _search_band_ordered(self) -> GeometryConfig:
        lo, hi = self.search_band
        if not 0.0 <= lo < hi <= 1.0:
            raise ValueError(f"search_band must be 0 <= start < end <= 1; got {self.search_band}")
        return self
