"""Every quality flag, raised where it should be and only there."""

from __future__ import annotations

import numpy as np
import pytest
from geometry_helpers import axis_of, boom, wedge

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry import MeasureHints, QualityFlag, measure_cones
from spraycv.geometry.analytic import WedgeSpec, draw_plumes

F = QualityFlag


def _clean() -> np.ndarray:
    return wedge(320, 0, 25, 25, 200)[0]


def test_clean_plume_has_only_the_bisector_flag() -> None:
    assert measure_cones(_clean())[0].flags == (F.AXIS_FROM_BISECTOR,)
    assert measure_cones(_clean(), MeasureHints(axis=(0, 1)))[0].flags == ()


def test_no_spray_on_an_empty_mask() -> None:
    m = measure_cones(np.zeros((100, 120), np.uint8))
    assert [r.flags for r in m] == [(F.NO_SPRAY,)]


def test_no_spray_at_a_hinted_apex_without_plume() -> None:
    mask, spec = wedge(320, 0, 25, 25, 200)
    res = measure_cones(mask, MeasureHints(apex=[spec.apex, (300.0, 20.0)]))
    assert not res[0].has(F.NO_SPRAY) and res[0].ok
    assert res[1].flags == (F.NO_SPRAY,) and res[1].apex == (300.0, 20.0)


def test_touches_border() -> None:
    mask, _ = wedge(256, 0, 30, 30, 300, apex=(128.0, 20.0))  # runs off the bottom
    m = measure_cones(mask)[0]
    assert m.has(F.TOUCHES_BORDER)
    assert abs(m.included_angle_deg - 60) <= 0.3
    assert not measure_cones(_clean())[0].has(F.TOUCHES_BORDER)


def test_apex_outside_image() -> None:
    mask, _ = wedge(320, 0, 20, 20, 300, apex=(160.0, -30.0))  # nozzle above the frame
    m = measure_cones(mask, MeasureHints(axis=(0, 1)))[0]
    assert m.has(F.APEX_OUTSIDE_IMAGE) and m.has(F.TOUCHES_BORDER)
    assert abs(m.included_angle_deg - 40) <= 0.5
    assert m.apex[1] == pytest.approx(-30.0, abs=2.0)


@pytest.mark.parametrize("how", ["config", "small blob"])
def test_too_few_edge_points(how: str) -> None:
    if how == "config":
        res = measure_cones(_clean(), config=GeometryConfig(min_edge_points=2000))
    else:  # a 16 px blob: too short a band for 8 points a side
        mask = np.zeros((200, 200), np.uint8)
        mask[90:106, 90:106] = 1
        res = measure_cones(mask)
    assert len(res) == 1 and res[0].has(F.TOO_FEW_EDGE_POINTS)
    assert np.isnan(res[0].included_angle_deg) and res[0].area_px > 0


@pytest.mark.parametrize(
    "hints",
    [None, MeasureHints(axis=(0, 1)), MeasureHints(apex=[(100, 10), (300, 10)])],
    ids=["no-hint", "axis", "apexes"],
)
@pytest.mark.parametrize("shape", [(64, 64), (300, 400)])
def test_a_mask_filling_the_image_is_flagged_not_an_error(shape, hints) -> None:
    # every outline point lies on the image border (an untrained model's "all spray")
    res = measure_cones(np.ones(shape, np.uint8), hints=hints)
    assert res and all(np.isnan(m.included_angle_deg) for m in res)
    assert all(m.has(F.TOO_FEW_EDGE_POINTS) or m.has(F.NO_SPRAY) for m in res)


def test_a_disc_is_never_a_clean_wedge() -> None:
    mask = np.zeros((200, 200), np.uint8)
    yy, xx = np.mgrid[:200, :200]
    mask[(xx - 100) ** 2 + (yy - 100) ** 2 < 40**2] = 1
    m = measure_cones(mask)[0]
    assert m.has(F.POOR_FIT) or m.has(F.TOO_FEW_EDGE_POINTS)


def test_poor_fit() -> None:
    assert not measure_cones(_clean())[0].has(F.POOR_FIT)
    strict = GeometryConfig(max_fit_rms_px=0.05)  # raster edges scatter by ~0.3 px
    assert measure_cones(_clean(), config=strict)[0].has(F.POOR_FIT)


def test_poor_fit_on_wavy_boundaries() -> None:
    size = 320
    ys, xs = np.mgrid[:size, :size].astype(float)
    dx, dy = xs - 160, ys - 40
    r = np.hypot(dx, dy)
    phi = np.degrees(np.arctan2(dx, dy))
    wave = 2.5 * np.sin(r / 4.0)  # degrees: boundaries wobble a few px
    mask = ((np.abs(phi) <= 25 + wave) & (r < 220)).astype(np.uint8)
    assert measure_cones(mask, MeasureHints(axis=(0, 1)))[0].has(F.POOR_FIT)


def test_plumes_merged_and_axis_sources() -> None:
    merged, _ = boom(448, 3, 0, 25, 25, 150, 0.6)
    res = measure_cones(merged)
    assert len(res) == 3 and all(r.has(F.PLUMES_MERGED) for r in res)
    assert all(r.axis_source == "boom" and not r.has(F.AXIS_FROM_BISECTOR) for r in res)
    apart, _ = boom(448, 3, 0, 25, 25, 110, 1.3)
    assert not any(r.has(F.PLUMES_MERGED) for r in measure_cones(apart))


def test_short_band_when_a_neighbour_hides_the_band() -> None:
    mask, _ = boom(448, 3, 0, 30, 30, 200, 0.15)  # neighbours meet at 0.15 L
    res = measure_cones(mask, MeasureHints(axis=(0, 1)))
    assert len(res) == 3
    middle = res[1]
    assert middle.has(F.PLUMES_MERGED) and middle.has(F.SHORT_BAND)
    assert abs(middle.included_angle_deg - 60) <= 2.0


def test_not_a_boom_when_apexes_lie_along_the_sprays() -> None:
    specs = [
        WedgeSpec((150.0, 30.0), 0, 15, 15, 120, ragged=0.04, seed=1, flatness=0.4),
        WedgeSpec((150.0, 200.0), 0, 15, 15, 100, ragged=0.04, seed=2, flatness=0.4),
    ]
    res = measure_cones(draw_plumes((320, 320), specs))
    assert len(res) == 2
    assert all(r.axis_source == "bisector" and r.has(F.AXIS_FROM_BISECTOR) for r in res)
    assert all(abs(r.included_angle_deg - 30) <= 0.3 for r in res)


def test_flags_are_strings_in_to_dict() -> None:
    merged, _ = boom(448, 3, 0, 25, 25, 150, 0.6)
    d = measure_cones(merged, MeasureHints(axis=tuple(axis_of(0))))[0].to_dict()
    assert d["flags"] == "plumes_merged"
    assert str(F.NO_SPRAY) == "no_spray"
