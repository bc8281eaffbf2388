"""Theoretical ground coverage of flat-fan nozzles on a boom (docs/cone_angle.md)."""

from __future__ import annotations

import math


def coverage_width(included_angle_deg: float, height: float) -> float:
    """Width covered on the ground, 2 h tan(theta / 2), in the unit of `height`.

    NaN for a NaN angle; ValueError for a negative height or an angle outside [0, 180).
    """
    if math.isnan(included_angle_deg):
        return float("nan")
    if not 0.0 <= included_angle_deg < 180.0:
        raise ValueError(f"included angle must be in [0, 180) deg; got {included_angle_deg}")
    if height < 0:
        raise ValueError(f"nozzle height must be >= 0; got {height}")
    return 2.0 * height * math.tan(math.radians(included_angle_deg) / 2.0)


def coverage_overlap(width_a: float, spacing: float, width_b: float | None = None) -> float:
    """Overlap of two neighbouring nozzles' ground coverage (negative: a gap between them).

    With one width (identical neighbours) this is width - spacing; with two it is
    (width_a + width_b) / 2 - spacing, each nozzle covering half its width on either side.
    """
    if spacing < 0:
        raise ValueError(f"nozzle spacing must be >= 0; got {spacing}")
    other = width_a if width_b is None else width_b
    return 0.5 * (width_a + other) - spacing
