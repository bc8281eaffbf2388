"""What reading a frame's blobs needs besides the blobs, drawn once from config and hints."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.search import LikelyApexes
from spraycv.geometry.types import MeasureHints
from spraycv.geometry.wedge import FitOptions


@dataclass(frozen=True)
class ReadContext:
    """The user's config, the fit options drawn from it (and the scale), the image shape
    (H, W), the likely apexes (None without an apex head) and the hint axis (2,) (None
    without one)."""

    cfg: GeometryConfig
    opts: FitOptions
    shape: tuple[int, int]
    likely: LikelyApexes | None = None
    hint_axis: np.ndarray | None = None

    @staticmethod
    def of(cfg: GeometryConfig, hints: MeasureHints, shape: tuple[int, int]) -> ReadContext:
        """The context of one frame of the given shape (hints checked already)."""
        axis = hints.unit_axis()
        return ReadContext(
            cfg=cfg,
            opts=FitOptions.of(cfg, hints.mm_per_px),
            shape=shape,
            likely=likely_apexes(hints, cfg),
            hint_axis=None if axis is None else np.asarray(axis, dtype=np.float64),
        )


def likely_apexes(hints: MeasureHints, cfg: GeometryConfig) -> LikelyApexes | None:
    """The hints' apex prior (e.g. a model's apex-head peaks) with the config's tolerances
    and each one's weight; None where there is no prior."""
    points, strength = hints.prior_array(), hints.prior_strength()
    if points is None or strength is None:
        return None
    return LikelyApexes(
        points,
        penalty_px=cfg.apex_prior_px,
        tol_px=cfg.apex_prior_tol_px,
        tol_frac=cfg.apex_prior_tol_frac,
        reach_px=cfg.hint_apex_tol_px,
        weights=np.minimum(strength / cfg.apex_prior_full_strength, 1.0),
    )
