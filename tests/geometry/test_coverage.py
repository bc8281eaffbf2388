"""Ground coverage and overlap, as pure functions and as mm outputs of a measurement."""

from __future__ import annotations

import itertools
import math

import pytest
from geometry_helpers import boom, wedge

from spraycv.geometry import MeasureHints, coverage_overlap, coverage_width, measure_cones


@pytest.mark.parametrize(
    ("angle", "height", "width"),
    [(110, 500, 2 * 500 * math.tan(math.radians(55))), (80, 500, 839.1), (0, 500, 0.0), (90, 0, 0)],
)
def test_coverage_width(angle: float, height: float, width: float) -> None:
    assert coverage_width(angle, height) == pytest.approx(width, abs=0.1)


def test_coverage_width_edge_cases() -> None:
    assert math.isnan(coverage_width(float("nan"), 500))
    with pytest.raises(ValueError, match="included angle must be in"):
        coverage_width(180, 500)
    with pytest.raises(ValueError, match="nozzle height must be >= 0"):
        coverage_width(90, -1)


@pytest.mark.parametrize(
    ("a", "spacing", "b", "overlap"),
    [(1400, 500, None, 900), (800, 1000, None, -200), (1000, 500, 600, 300)],
)
def test_coverage_overlap(a: float, spacing: float, b: float | None, overlap: float) -> None:
    assert coverage_overlap(a, spacing, b) == pytest.approx(overlap)


def test_overlap_rejects_negative_spacing() -> None:
    with pytest.raises(ValueError, match="spacing"):
        coverage_overlap(1000, -5)


def test_mm_outputs_of_a_measurement() -> None:
    mask, _ = wedge(320, 0, 40, 40, 150)
    px = measure_cones(mask)[0]
    m = measure_cones(
        mask, MeasureHints(mm_per_px=0.5, nozzle_height_mm=500, nozzle_spacing_mm=500)
    )[0]
    assert m.length_mm == pytest.approx(0.5 * px.length_px)
    assert m.area_mm2 == pytest.approx(0.25 * px.area_px)
    assert m.coverage_width_mm == pytest.approx(coverage_width(m.included_angle_deg, 500))
    assert m.overlap_mm == pytest.approx(m.coverage_width_mm - 500)
    assert math.isnan(m.overlap_next_mm)  # no neighbour
    assert math.isnan(px.length_mm) and math.isnan(px.coverage_width_mm)


def test_overlap_with_the_next_nozzle_on_a_boom() -> None:
    mask, _ = boom(448, 3, 0, 25, 25, 110, 1.3)
    res = measure_cones(mask, MeasureHints(nozzle_height_mm=500, nozzle_spacing_mm=500))
    for a, b in itertools.pairwise(res):
        expected = (a.coverage_width_mm + b.coverage_width_mm) / 2 - 500
        assert a.overlap_next_mm == pytest.approx(expected)
    assert math.isnan(res[-1].overlap_next_mm)


def test_coverage_does_not_need_a_scale() -> None:
    mask, _ = wedge(256, 0, 30, 30, 120)
    m = measure_cones(mask, MeasureHints(nozzle_height_mm=400))[0]
    assert m.coverage_width_mm == pytest.approx(coverage_width(m.included_angle_deg, 400))
    assert math.isnan(m.length_mm)
