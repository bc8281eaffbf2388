"""Hint validation, band options, and matching measurements to ground truth."""

from __future__ import annotations

import math

import pytest
from geometry_helpers import wedge

from spraycv.config.geometry import BandConfig, GeometryConfig
from spraycv.geometry import MeasureHints, measure_cones
from spraycv.geometry.matching import angle_errors, match_to_truth


@pytest.mark.parametrize(
    ("hints", "message"),
    [
        (MeasureHints(axis=(0, 0)), "hints.axis must be a non-zero"),
        (MeasureHints(apex=[(1, 2, 3)]), "hints.apex must be (x, y)"),
        (MeasureHints(apex=(float("nan"), 1)), "hints.apex must be (x, y)"),
        (MeasureHints(mm_per_px=0), "hints.mm_per_px must be a positive number"),
        (MeasureHints(nozzle_height_mm=-5), "hints.nozzle_height_mm must be a positive"),
    ],
)
def test_bad_hints_name_the_field(hints: MeasureHints, message: str) -> None:
    mask, _ = wedge(128, 0, 20, 20, 80)
    with pytest.raises(ValueError) as err:
        measure_cones(mask, hints)
    assert message in str(err.value)


def test_band_in_mm_needs_a_scale() -> None:
    mask, _ = wedge(256, 0, 25, 25, 180)
    cfg = GeometryConfig(band=BandConfig(start_mm=5, end_mm=30))
    with pytest.raises(ValueError, match=r"set hints\.mm_per_px"):
        measure_cones(mask, config=cfg)
    m = measure_cones(mask, MeasureHints(mm_per_px=0.5), config=cfg)[0]
    assert m.band == pytest.approx((10.0, 60.0))
    assert abs(m.included_angle_deg - 50) <= 0.3


@pytest.mark.parametrize(
    "band", [BandConfig(start_frac=0.05, end_frac=0.3), BandConfig(start_px=10, end_px=50)]
)
def test_band_options(band: BandConfig) -> None:
    mask, _ = wedge(256, 30, 25, 25, 180)
    m = measure_cones(mask, config=GeometryConfig(band=band))[0]
    assert abs(m.included_angle_deg - 50) <= 0.3
    if band.start_px is not None:
        assert m.band == (10.0, 50.0)
    else:
        assert m.band[1] == pytest.approx(0.3 * m.length_px)


def _truth(apex: tuple[float, float], inc: float = 50.0, visible: bool = True) -> dict:
    return {
        "apex": list(apex),
        "length_px": 180.0,
        "visible": visible,
        "state": "on" if visible else "off",
        "included_angle_deg": inc,
        "half_angle_left_deg": inc / 2,
        "half_angle_right_deg": inc / 2,
    }


def test_match_to_truth() -> None:
    mask, spec = wedge(256, 0, 25, 25, 180)
    meas = measure_cones(mask)
    truth = [_truth((200.0, 10.0)), _truth(spec.apex), _truth((5.0, 5.0), visible=False)]
    res = match_to_truth(meas, truth)
    assert [(p.gt, p.meas) for p in res.pairs] == [(1, 0)]
    assert res.missed == [0] and res.extra == []
    assert res.pairs[0].apex_dist_px < 1.5
    err = angle_errors(meas[0], truth[1])
    assert abs(err["included"]) <= 0.3 and abs(err["left"]) <= 0.3


def test_unmatched_measurements_are_extra() -> None:
    mask, _ = wedge(256, 0, 25, 25, 180)
    res = match_to_truth(measure_cones(mask), [_truth((10.0, 200.0))])
    assert res.pairs == [] and res.missed == [0] and res.extra == [0]
    assert match_to_truth(measure_cones(mask * 0), []).extra == []  # no_spray is not extra
    assert not math.isnan(res.missed[0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"search_band": (0.5, 0.2)}, "search_band must be"),
        ({"robust_fit": "l1"}, "robust_fit"),
        ({"min_edge_points": 1}, "min_edge_points"),
        ({"band_start": 0.1}, "Extra inputs are not permitted"),
    ],
)
def test_geometry_config_rejects_bad_values(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GeometryConfig(**kwargs)
