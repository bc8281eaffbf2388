"""The boom's axis drawn again through the refined apexes (`on_refined_boom`): only the axis
and the split of each included angle into its halves move."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spraycv.geometry import ConeMeasurement
from spraycv.geometry.types import Line
from spraycv.refine.stage import BOOM_TURN_DEG, on_refined_boom, with_axis


def unit(deg: float) -> np.ndarray:
    """The unit vector `deg` from straight down, towards +x (the geometry's tilt)."""
    return np.array([math.sin(math.radians(deg)), math.cos(math.radians(deg))])


def plume(apex, true_tilt: float, left: float, right: float, axis_tilt: float, source="boom"):
    """A reading whose sides open `left` and `right` degrees from a `true_tilt` axis, read
    with the axis `axis_tilt` (its halves as that axis splits them)."""
    u = unit(true_tilt)
    dl, dr = unit(true_tilt - left), unit(true_tilt + right)  # n_left = (-uy, ux) is -x
    m = ConeMeasurement(0, apex=tuple(apex), axis=tuple(u), axis_source=source,
                        included_angle_deg=left + right, half_angle_left_deg=left,
                        half_angle_right_deg=right, length_px=200.0,
                        left_line=Line(tuple(apex), tuple(dl)),
                        right_line=Line(tuple(apex), tuple(dr)))  # fmt: skip
    return with_axis(m, unit(axis_tilt))


def boom(slope_deg: float, axis_tilt: float, source: str = "boom", n: int = 3):
    """n nozzles 150 px apart on a boom sloped `slope_deg` (their sprays along its normal,
    20 and 24 deg each side), read with the axis `axis_tilt`."""
    along = np.array([math.cos(math.radians(slope_deg)), -math.sin(math.radians(slope_deg))])
    apexes = [np.array([100.0, 200.0]) + k * 150.0 * along for k in range(n)]
    return [plume(a, slope_deg, 20.0, 24.0, axis_tilt, source) for a in apexes]


@pytest.mark.parametrize(
    ("readings", "tilt", "left"),
    [
        (boom(6.0, 9.0), 6.0, 20.0),  # coarse axis 3 deg off: the refined apexes' normal
        (boom(-12.0, -10.0), -12.0, 20.0),
        (boom(6.0, 9.0, n=2), 6.0, 20.0),  # two are a boom
        (boom(6.0, 9.0, n=1), 9.0, 23.0),  # one is not
        (boom(6.0, 9.0, source="bisector"), 9.0, 23.0),  # each plume's own axis stays
        (boom(6.0, 6.0 + 1.5 * BOOM_TURN_DEG), 6.0 + 1.5 * BOOM_TURN_DEG, 20.0 + 7.5),  # ran off
    ],
)
def test_boom_readings_take_the_normal_of_their_refined_apexes(readings, tilt, left):
    out = on_refined_boom(readings)
    for before, after in zip(readings, out, strict=True):
        assert after.tilt_deg == pytest.approx(tilt, abs=1e-6)
        assert after.half_angle_left_deg == pytest.approx(left, abs=1e-6)
        assert after.included_angle_deg == before.included_angle_deg
        assert after.half_angle_left_deg + after.half_angle_right_deg == pytest.approx(44.0)
        assert after.apex == before.apex and after.left_line == before.left_line


def test_apexes_at_one_point_and_readings_without_sides_are_left_alone():
    one_point = [plume((100.0, 100.0), 0.0, 20.0, 20.0, 3.0) for _ in range(3)]
    assert on_refined_boom(one_point) == one_point
    sideless = [*boom(6.0, 9.0), ConeMeasurement(3, apex=(700.0, 200.0), axis_source="boom")]
    out = on_refined_boom(sideless)
    assert out[3] is sideless[3]
    assert out[0].tilt_deg == pytest.approx(6.0, abs=1e-6)


def test_an_axis_outside_the_sides_keeps_the_reading():
    m = plume((100.0, 100.0), 0.0, 10.0, 10.0, 0.0)
    assert with_axis(m, unit(15.0)) is m
