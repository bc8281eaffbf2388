"""Exact angles on analytic masks: any direction, 10..150 deg, asymmetry, noise, booms."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from geometry_helpers import axis_of, boom, nearest, wedge

from spraycv.geometry import MeasureHints, QualityFlag, measure_cones
from spraycv.geometry.analytic import WedgeSpec, add_droplets, add_ligaments, draw_wedge


def _tilt_diff(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


@pytest.mark.parametrize("included", [10, 20, 40, 60, 90, 110, 130, 150])
@pytest.mark.parametrize("tilt", [0, 30, -45, 90, 180, -120])
def test_included_angle_any_direction(included: float, tilt: float) -> None:
    length = 260 if included <= 60 else 150 if included <= 110 else 90
    mask, spec = wedge(384, tilt, included / 2, included / 2, length, seed=included)
    res = measure_cones(mask)
    assert len(res) == 1
    m = res[0]
    assert abs(m.included_angle_deg - included) <= 0.3
    assert m.half_angle_left_deg == pytest.approx(m.half_angle_right_deg)  # bisector axis
    assert _tilt_diff(m.tilt_deg, tilt) <= 0.3
    assert math.hypot(m.apex[0] - spec.apex[0], m.apex[1] - spec.apex[1]) <= 1.5
    assert m.axis_source == "bisector" and m.has(QualityFlag.AXIS_FROM_BISECTOR)
    assert not m.has(QualityFlag.POOR_FIT)


@pytest.mark.parametrize(
    ("half_left", "half_right", "tilt"),
    [(30, 20, 0), (50, 40, 25), (10, 3, -60), (60, 45, 100), (5, 25, 180), (70, 62, -10)],
)
def test_asymmetric_halves_with_axis_hint(half_left: float, half_right: float, tilt: float) -> None:
    mask, _ = wedge(384, tilt, half_left, half_right, 150, seed=3)
    m = measure_cones(mask, MeasureHints(axis=tuple(axis_of(tilt) * 3.0)))[0]  # any length
    assert m.axis_source == "hint"
    assert abs(m.half_angle_left_deg - half_left) <= 0.3
    assert abs(m.half_angle_right_deg - half_right) <= 0.3
    assert abs(m.included_angle_deg - (half_left + half_right)) <= 0.3
    expected = (half_right - half_left) / (half_right + half_left)
    assert m.symmetry_index == pytest.approx(expected, abs=0.05)
    assert not m.has(QualityFlag.AXIS_FROM_BISECTOR)


def test_left_is_image_left_for_a_downward_spray() -> None:
    mask, _ = wedge(320, 0, 40, 20, 140)
    m = measure_cones(mask, MeasureHints(axis=(0, 1)))[0]
    assert m.half_angle_left_deg == pytest.approx(40, abs=0.3)
    assert m.left_line.direction[0] < 0  # left boundary runs to image-left
    assert m.right_line.direction[0] > 0


def test_asymmetric_without_hint_reports_the_bisector() -> None:
    mask, _ = wedge(320, 15, 35, 25, 140)
    m = measure_cones(mask)[0]
    assert m.has(QualityFlag.AXIS_FROM_BISECTOR)
    assert m.half_angle_left_deg == pytest.approx(30, abs=0.3)
    assert m.half_angle_right_deg == pytest.approx(30, abs=0.3)
    assert _tilt_diff(m.tilt_deg, 15 - 5) <= 0.3  # bisector leans 5 deg to the wide (left) side


@pytest.mark.parametrize("kind", ["droplets", "ligaments", "both"])
def test_robust_to_droplets_and_ligaments(kind: str) -> None:
    mask, spec = wedge(384, -20, 30, 30, 230, seed=5)
    noisy = mask
    if kind in ("droplets", "both"):
        # detached droplets around the plume, and some stuck to its boundary
        noisy = add_droplets(noisy, 300, seed=1, radius=(1, 3), margin_px=30)
        noisy = add_droplets(noisy, 40, seed=2, radius=(1, 3), margin_px=6)
    if kind in ("ligaments", "both"):
        noisy = add_ligaments(noisy, 25, seed=2)
    res = measure_cones(noisy)
    assert len(res) == 1
    assert abs(res[0].included_angle_deg - 60) <= 0.5
    assert math.hypot(res[0].apex[0] - spec.apex[0], res[0].apex[1] - spec.apex[1]) <= 2.0


@pytest.mark.parametrize("method", ["huber", "ransac"])
def test_robust_methods_agree(method: str) -> None:
    from spraycv.config.geometry import GeometryConfig

    mask, _ = wedge(320, 10, 25, 25, 200, seed=4)
    noisy = add_ligaments(add_droplets(mask, 40, seed=3, margin_px=8), 15, seed=4)
    m = measure_cones(noisy, config=GeometryConfig(robust_fit=method))[0]
    assert abs(m.included_angle_deg - 50) <= 0.5


def test_bent_far_edges_do_not_pull_the_lines() -> None:
    mask, _ = wedge(384, 0, 25, 25, 250, bend=20.0, ragged=0.08)
    m = measure_cones(mask)[0]
    assert abs(m.included_angle_deg - 50) <= 0.3


def test_apex_hint_seeds_the_plume() -> None:
    mask, spec = wedge(320, 70, 20, 20, 180)
    m = measure_cones(mask, MeasureHints(apex=spec.apex))[0]
    assert m.index == 0
    assert abs(m.included_angle_deg - 40) <= 0.3
    assert math.hypot(m.apex[0] - spec.apex[0], m.apex[1] - spec.apex[1]) <= 1.5


@pytest.mark.parametrize(
    ("n", "roll", "meet"), [(3, 0, 1.3), (4, 0, 0.6), (4, 90, 0.6), (3, 180, 1.3), (4, -30, 0.7)]
)
def test_boom_axis_and_order(n: int, roll: float, meet: float) -> None:
    mask, specs = boom(448, n, roll, 28, 22, 110, meet)
    res = measure_cones(mask)
    assert len(res) == n
    # sorted along the boom: along -n_left, image left to right for a downward spray
    u = axis_of(roll)
    key = np.array([u[1], -u[0]])
    order = [float(np.dot(m.apex, key)) for m in res]
    assert order == sorted(order)
    assert [m.index for m in res] == list(range(n))
    for spec in specs:
        m = nearest(res, spec.apex)
        assert m.axis_source == "boom"
        assert _tilt_diff(m.tilt_deg, roll) <= 0.3
        assert abs(m.half_angle_left_deg - 28) <= 0.5
        assert abs(m.half_angle_right_deg - 22) <= 0.5
        assert m.has(QualityFlag.PLUMES_MERGED) == (meet < 1.0)


def test_merged_plumes_with_axis_hint() -> None:
    mask, specs = boom(448, 3, 10, 30, 30, 150, 0.6)
    res = measure_cones(mask, MeasureHints(axis=tuple(axis_of(10))))
    assert len(res) == 3
    for spec in specs:
        m = nearest(res, spec.apex)
        assert m.has(QualityFlag.PLUMES_MERGED)
        assert abs(m.half_angle_left_deg - 30) <= 0.5
        assert abs(m.half_angle_right_deg - 30) <= 0.5


def test_merged_plumes_with_apex_hints_keep_hint_order() -> None:
    mask, specs = boom(448, 3, 0, 30, 30, 150, 0.6)
    apexes = [specs[2].apex, specs[0].apex, specs[1].apex, (5.0, 5.0)]
    res = measure_cones(mask, MeasureHints(apex=apexes))
    assert [m.index for m in res] == [0, 1, 2, 3]
    for m, a in zip(res[:3], apexes[:3], strict=True):
        assert math.hypot(m.apex[0] - a[0], m.apex[1] - a[1]) <= 2.0
        assert abs(m.included_angle_deg - 60) <= 0.5
        assert m.axis_source == "boom"
    assert res[3].has(QualityFlag.NO_SPRAY)


def test_to_dict_is_flat_and_json_able() -> None:
    mask, _ = wedge(256, 0, 30, 30, 120)
    d = measure_cones(mask, MeasureHints(mm_per_px=0.5))[0].to_dict()
    for key in ("included_angle_deg", "half_angle_left_deg", "apex_x", "apex_y", "tilt_deg"):
        assert isinstance(d[key], float)
    assert all(not isinstance(v, list | dict | tuple) for v in d.values())
    assert d["coverage_width_mm"] is None  # no nozzle height given
    back = json.loads(json.dumps(d, allow_nan=False))
    assert back["flags"] == "axis_from_bisector"


def test_width_profile_grows_linearly() -> None:
    mask, _ = wedge(320, 0, 30, 30, 200, bend=0.0)
    m = measure_cones(mask)[0]
    s, w = m.width_profile[:, 0], m.width_profile[:, 1]
    near = (s > 20) & (s < 100)
    slope = np.polyfit(s[near], w[near], 1)[0]
    assert slope == pytest.approx(2 * math.tan(math.radians(30)), rel=0.03)
    assert m.band[0] == pytest.approx(0.1 * m.length_px) and m.band[1] == pytest.approx(
        0.4 * m.length_px
    )


@pytest.mark.parametrize(("drop_px", "half_deg"), [(20, 7.5), (40, 7.5), (40, 10.0)])
def test_a_part_on_a_tilted_apex_line_never_costs_a_plume_its_reading(drop_px, half_deg):
    """A lit part pointing the same way joins the plume on a boom whose apex line is tilted
    (its normal about 7-14 deg off the plume's axis). Refitted along that normal, a narrow
    plume loses a side; it keeps its own reading instead of being reported without angles."""
    plume = WedgeSpec((300.0, 130.0), 0.0, half_deg, half_deg, 220.0, flatness=0.5)
    part = WedgeSpec((140.0, 130.0 + drop_px), 3.0, 14.0, 14.0, 120.0, flatness=0.5)
    mask = np.maximum(draw_wedge((512, 512), plume), draw_wedge((512, 512), part))
    readings = measure_cones(mask)
    assert len(readings) == 2 and all(m.ok for m in readings)
    (narrow,) = [m for m in readings if m.apex[0] > 220]
    assert narrow.included_angle_deg == pytest.approx(2 * half_deg, abs=0.5)
    assert np.hypot(narrow.apex[0] - 300.0, narrow.apex[1] - 130.0) < 3.0
