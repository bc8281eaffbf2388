"""Cone geometry: binary spray mask -> per-nozzle cone measurements (docs/cone_angle.md)."""

from __future__ import annotations

from spraycv.geometry.cone import measure_cones
from spraycv.geometry.coverage import coverage_overlap, coverage_width
from spraycv.geometry.types import ConeMeasurement, Line, MeasureHints, QualityFlag
from spraycv.geometry.validate import MaskError, validate_mask

__all__ = [
    "ConeMeasurement",
    "Line",
    "MaskError",
    "MeasureHints",
    "QualityFlag",
    "coverage_overlap",
    "coverage_width",
    "measure_cones",
    "validate_mask",
]
