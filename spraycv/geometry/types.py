"""Data types of the cone geometry: hints in, one measurement per plume out.

Conventions (docs/cone_angle.md): pixel centres at (x, y) = (col, row), directions are unit
vectors (ux, uy), left is the side of n_left = (-uy, ux), tilt = atan2(ux, uy) in degrees.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

Point = tuple[float, float]
PxRange = tuple[float, float]  # (start, end) distances along the axis from the apex, px
JsonValue = float | int | str | None
NAN = float("nan")


class ValueEnum(str, Enum):
    """A str enum written, stored and shown as its value: str(x) and f"{x}" give x.value
    (what enum.StrEnum does from Python 3.11 on; spraycv still runs on 3.10)."""

    def __str__(self) -> str:
        return self.value


class QualityFlag(ValueEnum):
    """Why a measurement may deserve a second look (values are the strings written out)."""

    NO_SPRAY = "no_spray"  # nothing to measure (empty mask, or no plume at a hinted apex)
    TOUCHES_BORDER = "touches_border"  # the plume is cut by the image border: L is a lower bound
    TOO_FEW_EDGE_POINTS = "too_few_edge_points"  # a side has too few band points: no angles
    POOR_FIT = "poor_fit"  # a boundary is not straight in the band (fit RMS or outliers)
    PLUMES_MERGED = "plumes_merged"  # split out of a component holding several plumes
    AXIS_FROM_BISECTOR = "axis_from_bisector"  # no hint, no boom: left == right by construction
    APEX_OUTSIDE_IMAGE = "apex_outside_image"  # the fitted apex lies outside the image
    SHORT_BAND = "short_band"  # a side was fitted on a band shortened by a neighbouring plume
    NO_WEDGE = "no_wedge"  # the two boundary lines do not open away from the apex: no plume
    FROM_APEX_PEAK = "from_apex_peak"  # read by the refiner at an apex-head peak that no
    # reading of the mask explained (plumes merged in the mask: spraycv.refine.recover)


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
    apex_prior_strength: how sure the source is of each likely apex, in [0, 1] (the head's
        heat at its peak); a weak one weighs less (GeometryConfig.apex_prior_full_strength).
        None: every one counts fully.
    """

    apex: Point | Sequence[Point] | None = None
    axis: Point | None = None
    mm_per_px: float | None = None
    nozzle_height_mm: float | None = None
    nozzle_spacing_mm: float | None = None
    apex_prior: Sequence[Point] | None = None
    apex_prior_strength: Sequence[float] | None = None

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

    def prior_strength(self) -> np.ndarray | None:
        """How sure each likely apex is, (K,) in [0, 1] (ones where not given), or None
        without likely apexes (validates: one value per likely apex)."""
        points = self.prior_array()
        if points is None:
            return None
        if self.apex_prior_strength is None:
            return np.ones(len(points))
        arr = np.asarray(list(self.apex_prior_strength), dtype=float).reshape(-1)
        if len(arr) != len(points) or not np.all((arr >= 0) & (arr <= 1)):
            raise ValueError(
                "hints.apex_prior_strength must give one value in [0, 1] per likely apex; got "
                f"{self.apex_prior_strength!r} for {len(points)}"
            )
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
        self.prior_strength()
        self.unit_axis()
        for name in ("mm_per_px", "nozzle_height_mm", "nozzle_spacing_mm"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"hints.{name} must be a positive number; got {value!r}")


def finite_or_none(value: float | None) -> float | None:
    """A JSON-able float: None, NaN and inf become None (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Column:
    """One flat column as written out: to_dict, CSV files, the daemon's records and SQLite.

    kind: the type of its values, float, int or str (a float is None where not measured).
    read: the value from the object the column belongs to.
    """

    name: str
    kind: type
    read: Callable[[Any], JsonValue] = field(compare=False, repr=False)


@dataclass(frozen=True)
class ConeMeasurement:
    """One plume's cone geometry (angles in degrees, lengths in px unless named _mm).

    width_profile: (M, 2) float array of (s_px, width_px), s the distance along the axis from
    the apex and width the plume's extent across the axis there.
    band: (start_px, end_px), the nominal band where the boundaries were fitted.

    The fields, in this order, are the columns written out (to_dict, CSV, the daemon's
    records and SQLite; see exported_columns): a new field is written everywhere, and the
    daemon's database needs one migration adding its column (spraycv/stream/schema.py).
    """

    index: int
    apex: Point = (NAN, NAN)
    axis: Point = (NAN, NAN)
    axis_source: str = "none"  # "hint" | "boom" | "bisector" | "none"
    tilt_deg: float = NAN
    half_angle_left_deg: float = NAN
    half_angle_right_deg: float = NAN
    included_angle_deg: float = NAN
    symmetry_index: float = NAN
    length_px: float = NAN
    area_px: float = 0.0
    band: PxRange = (NAN, NAN)
    left_line: Line = field(default_factory=Line.nan)
    right_line: Line = field(default_factory=Line.nan)
    fit_rms_left_px: float = NAN
    fit_rms_right_px: float = NAN
    n_edge_points_left: int = 0
    n_edge_points_right: int = 0
    length_mm: float = NAN
    area_mm2: float = NAN
    coverage_width_mm: float = NAN
    overlap_mm: float = NAN
    overlap_next_mm: float = NAN
    flags: tuple[QualityFlag, ...] = ()
    # how far the reading can be trusted, in [0, 1] (spraycv.geometry.confidence); below the
    # threshold `unreliable` names why (';'-joined reasons) and the angle is not to be used
    confidence: float = NAN
    unreliable: str = ""
    width_profile: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    def has(self, flag: QualityFlag | str) -> bool:
        """Whether the measurement carries this flag."""
        return QualityFlag(flag) in self.flags

    @property
    def ok(self) -> bool:
        """True when angles were measured (finite included angle)."""
        return math.isfinite(self.included_angle_deg)

    @property
    def reliable(self) -> bool:
        """Angles measured and not marked unreliable: a reading to check, smooth and alarm on."""
        return self.ok and not self.unreliable

    def to_dict(self) -> dict[str, JsonValue]:
        """Flat JSON-able dict (NaN -> None; flags as a ';'-joined string; no width profile)."""
        return {c.name: c.read(self) for c in exported_columns(type(self))}


def _number(name: str) -> tuple[Column, ...]:
    return (Column(name, float, lambda m: finite_or_none(getattr(m, name))),)


def _integer(name: str) -> tuple[Column, ...]:
    return (Column(name, int, lambda m: int(getattr(m, name))),)


def _text(name: str) -> tuple[Column, ...]:
    return (Column(name, str, lambda m: str(getattr(m, name))),)


def _flags(name: str) -> tuple[Column, ...]:
    return (Column(name, str, lambda m: ";".join(f.value for f in getattr(m, name))),)


def _not_written(name: str) -> tuple[Column, ...]:
    return ()


_Layout = Callable[[str], tuple[Column, ...]]  # a field's name -> its columns


def _parts(*suffixes: str, values: Callable[[Any], Sequence[float]] = tuple) -> _Layout:
    """Columns <field>_<suffix>, one per number of a point, a line or a range."""

    def layout(name: str) -> tuple[Column, ...]:
        def read(i: int) -> Callable[[Any], JsonValue]:
            return lambda m: finite_or_none(values(getattr(m, name))[i])

        return tuple(Column(f"{name}_{s}", float, read(i)) for i, s in enumerate(suffixes))

    return layout


# How a field is written out, by its annotation as written in ConeMeasurement (a field of a
# type not listed here fails at import, naming the field: add its layout here).
_LAYOUTS: dict[str, _Layout] = {
    "float": _number,
    "int": _integer,
    "str": _text,
    "Point": _parts("x", "y"),
    "PxRange": _parts("start_px", "end_px"),
    "Line": _parts("x", "y", "dx", "dy", values=lambda line: (*line.point, *line.direction)),
    "tuple[QualityFlag, ...]": _flags,
    "np.ndarray": _not_written,  # the width profile: an array, not a column
}


@functools.cache  # a pure function of the class: computed once per class
def exported_columns(cls: type[ConeMeasurement]) -> tuple[Column, ...]:
    """The flat columns of a measurement class, in field order (to_dict, CSV, SQLite)."""
    columns: list[Column] = []
    for f in dataclasses.fields(cls):
        layout = _LAYOUTS.get(str(f.type))
        if layout is None:
            raise TypeError(
                f"{cls.__name__}.{f.name}: no column layout for type {f.type!r}; "
                "add one to _LAYOUTS in spraycv/geometry/types.py"
            )
        columns.extend(layout(f.name))
    return tuple(columns)


exported_columns(ConeMeasurement)  # a field of a type with no layout fails here, at import
