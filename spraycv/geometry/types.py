"""Data types of the cone geometry: hints in, one measurement per plume out.

Conventions (docs/cone_angle.md): pixel centres at (x, y) = (col, row), directions are unit
vectors (ux, uy), left is the side of n_left = (-uy, ux), tilt = atan2(ux, uy) in degrees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

Point = tuple[float, float]
NAN = float("nan")


class QualityFlag(str, Enum):
    """Why a measurement may deserve a second look (values are the strings written out)."""

    NO_SPRAY = "no_spray"  # nothing to measure (empty mask, or no plume at a hinted apex)
    TOUCHES_BORDER = "touches_border"  # the plume is cut by the image border: L is a lower bound
    TOO_FEW_EDGE_POINTS = "too_few_edge_points"  # a side has too few band points: no angles
    POOR_FIT = "poor_fit"  # a boundary is not straight in the band (fit RMS or outliers)
    PLUMES_MERGED = "plumes_merged"  # split out of a component holding several plumes
    AXIS_FROM_BISECTOR = "axis_from_bisector"  # no hint, no boom: left == right by construction
    APEX_OUTSIDE_IMAGE = "apex_outside_image"  # the fitted apex lies outside the image
    SHORT_BAND = "short_band"  # a side was fitted on a band shortened by a neighbouring plume

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Line:
    """A straight line: a point on it and a unit direction (pointing away from the apex)."""

    point: Point
    direction: Point

    @staticmethod
    def nan() -> Line:
        return Line((NAN, NAN), (NAN, NAN))


@dataclass(frozen=True)
class MeasureHints:
    """What the rig may know in advance; every field is optional.

    apex: one (x, y) or a sequence of them, one per nozzle (the measurements then follow this
        order, one per hint apex, flagged no_spray where nothing sprays there).
    axis: the nozzles' mounting direction (ux, uy), pointing into the spray (normalised here).
    mm_per_px: image scale, enables the mm outputs and a band given in mm.
    nozzle_height_mm: nozzle height above the target, enables the coverage width.
    nozzle_spacing_mm: spacing along the boom, enables the overlap (needs the height too).
    apex_prior: likely apex positions, e.g. from a model's apex head: unlike `apex`, they
        force nothing; they only rank a plume's candidate apexes (GeometryConfig.apex_prior_px).
    """

    apex: Point | Sequence[Point] | None = None
    axis: Point | None = None
    mm_per_px: float | None = None
    nozzle_height_mm: float | None = None
    nozzle_spacing_mm: float | None = None
    apex_prior: Sequence[Point] | None = None

    def apex_list(self) -> list[Point] | None:
        """The hint apexes as a list of (x, y), or None (validates the shape)."""
        if self.apex is None:
            return None
        arr = np.asarray(self.apex, dtype=float)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != 2 or not np.all(np.isfinite(arr)):
            raise ValueError(f"hints.apex must be (x, y) or a list of (x, y); got {self.apex!r}")
        return [(float(x), float(y)) for x, y in arr]

    def prior_array(self) -> np.ndarray | None:
        """The likely apexes as a (K, 2) float array (K may be 0), or None (validates)."""
        if self.apex_prior is None:
            return None
        arr = np.asarray(list(self.apex_prior), dtype=float)
        if arr.size == 0:
            return np.zeros((0, 2))
        if arr.ndim != 2 or arr.shape[1] != 2 or not np.all(np.isfinite(arr)):
            raise ValueError(f"hints.apex_prior must be a list of (x, y); got {self.apex_prior!r}")
        return arr

    def unit_axis(self) -> Point | None:
        """The hint axis normalised to unit length, or None (rejects a zero vector)."""
        if self.axis is None:
            return None
        ux, uy = (float(v) for v in self.axis)
        norm = math.hypot(ux, uy)
        if not math.isfinite(norm) or norm < 1e-9:
            raise ValueError(f"hints.axis must be a non-zero (ux, uy); got {self.axis!r}")
        return (ux / norm, uy / norm)

    def check(self) -> None:
        """Raise ValueError naming the first inconsistent field."""
        self.apex_list()
        self.prior_array()
        self.unit_axis()
        for name in ("mm_per_px", "nozzle_height_mm", "nozzle_spacing_mm"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"hints.{name} must be a positive number; got {value!r}")


def _num(value: float) -> float | None:
    """JSON-able float: NaN/inf become None."""
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class ConeMeasurement:
    """One plume's cone geometry (angles in degrees, lengths in px unless named _mm).

    width_profile: (M, 2) float array of (s_px, width_px), s the distance along the axis from
    the apex and width the plume's extent across the axis there.
    band: (start_px, end_px), the nominal band where the boundaries were fitted.
    """

    index: int
    apex: Point = (NAN, NAN)
    axis: Point = (NAN, NAN)
    axis_source: str = "none"  # "hint" | "boom" | "bisector" | "none"
    tilt_deg: float = NAN
    left_line: Line = field(default_factory=Line.nan)
    right_line: Line = field(default_factory=Line.nan)
    half_angle_left_deg: float = NAN
    half_angle_right_deg: float = NAN
    included_angle_deg: float = NAN
    length_px: float = NAN
    area_px: float = 0.0
    band: tuple[float, float] = (NAN, NAN)
    width_profile: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    symmetry_index: float = NAN
    fit_rms_left_px: float = NAN
    fit_rms_right_px: float = NAN
    n_edge_points_left: int = 0
    n_edge_points_right: int = 0
    flags: tuple[QualityFlag, ...] = ()
    length_mm: float = NAN
    area_mm2: float = NAN
    coverage_width_mm: float = NAN
    overlap_mm: float = NAN
    overlap_next_mm: float = NAN

    def has(self, flag: QualityFlag | str) -> bool:
        """Whether the measurement carries this flag."""
        return QualityFlag(flag) in self.flags

    @property
    def ok(self) -> bool:
        """True when angles were measured (finite included angle)."""
        return math.isfinite(self.included_angle_deg)

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON-able dict (NaN -> None; flags as a ';'-joined string; no width profile)."""
        out: dict[str, Any] = {
            "index": self.index,
            "apex_x": _num(self.apex[0]),
            "apex_y": _num(self.apex[1]),
            "axis_x": _num(self.axis[0]),
            "axis_y": _num(self.axis[1]),
            "axis_source": self.axis_source,
            "tilt_deg": _num(self.tilt_deg),
            "half_angle_left_deg": _num(self.half_angle_left_deg),
            "half_angle_right_deg": _num(self.half_angle_right_deg),
            "included_angle_deg": _num(self.included_angle_deg),
            "symmetry_index": _num(self.symmetry_index),
            "length_px": _num(self.length_px),
            "area_px": _num(self.area_px),
            "band_start_px": _num(self.band[0]),
            "band_end_px": _num(self.band[1]),
        }
        for side, line in (("left", self.left_line), ("right", self.right_line)):
            out[f"{side}_line_x"] = _num(line.point[0])
            out[f"{side}_line_y"] = _num(line.point[1])
            out[f"{side}_line_dx"] = _num(line.direction[0])
            out[f"{side}_line_dy"] = _num(line.direction[1])
        out.update(
            fit_rms_left_px=_num(self.fit_rms_left_px),
            fit_rms_right_px=_num(self.fit_rms_right_px),
            n_edge_points_left=self.n_edge_points_left,
            n_edge_points_right=self.n_edge_points_right,
            length_mm=_num(self.length_mm),
            area_mm2=_num(self.area_mm2),
            coverage_width_mm=_num(self.coverage_width_mm),
            overlap_mm=_num(self.overlap_mm),
            overlap_next_mm=_num(self.overlap_next_mm),
            flags=";".join(f.value for f in self.flags),
        )
        return out
