"""Image scale (mm per pixel) from a reference in the picture: two points or a checkerboard.

The scale turns the geometry's pixel lengths and areas into mm (`MeasureHints.mm_per_px`).
"""

from __future__ import annotations

from spraycv.calibration.checkerboard import find_checkerboard, scale_from_checkerboard
from spraycv.calibration.config_file import write_source_scale
from spraycv.calibration.scale import CalibrationError, scale_from_points

__all__ = [
    "CalibrationError",
    "find_checkerboard",
    "scale_from_checkerboard",
    "scale_from_points",
    "write_source_scale",
]
