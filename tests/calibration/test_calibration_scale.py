"""scale_from_points and scale_from_checkerboard: values and every error (table-driven)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from calib_helpers import draw_checkerboard

from spraycv.calibration import (
    CalibrationError,
    find_checkerboard,
    scale_from_checkerboard,
    scale_from_points,
)

# --- two points ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p1", "p2", "distance_mm", "expected"),
    [
        ((0, 0), (3, 4), 10.0, 2.0),  # 5 px
        ((3, 4), (0, 0), 10.0, 2.0),  # order does not matter
        ((10.5, 2.0), (10.5, 102.0), 50.0, 0.5),  # vertical, fractional
        ((-20.0, -5.0), (20.0, -5.0), 4.0, 0.1),  # outside the image is still geometry
        (np.array([1.0, 1.0]), [2.0, 2.0], math.sqrt(2), 1.0),  # arrays and lists
        ((0, 0), (0.25, 0), 1.0, 4.0),  # close points: a large but valid scale
    ],
)
def test_scale_from_points(p1, p2, distance_mm, expected) -> None:
    assert scale_from_points(p1, p2, distance_mm) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("p1", "p2", "distance_mm", "message"),
    [
        ((5, 5), (5, 5), 10.0, "coincide"),
        ((5.0, 5.0), np.array([5.0, 5.0]), 1.0, "coincide"),
        ((0, 0), (3, 4), 0.0, "distance_mm must be a finite length > 0"),
        ((0, 0), (3, 4), -1.0, "distance_mm must be a finite length > 0"),
        ((0, 0), (3, 4), math.nan, "distance_mm must be a finite length > 0"),
        ((0, 0), (3, 4), math.inf, "distance_mm must be a finite length > 0"),
        ((0, 0), (3, 4), "ten", "distance_mm must be a number"),
        ((math.nan, 0), (3, 4), 1.0, "p1 must have finite coordinates"),
        ((0, 0), (3, math.inf), 1.0, "p2 must have finite coordinates"),
        ((0, 0, 0), (3, 4), 1.0, "p1 must be an (x, y) pair"),
        ((0, 0), (3,), 1.0, "p2 must be an (x, y) pair"),
        (("a", "b"), (3, 4), 1.0, "p1 must be an (x, y) pair"),
        (None, (3, 4), 1.0, "p1 must be an (x, y) pair"),
    ],
)
def test_scale_from_points_errors(p1, p2, distance_mm, message) -> None:
    with pytest.raises(CalibrationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        scale_from_points(p1, p2, distance_mm)


def test_calibration_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        scale_from_points((1, 1), (1, 1), 1.0)


# --- checkerboard --------------------------------------------------------------------------


def _board_image(
    square_px: float,
    squares: tuple[int, int] = (6, 5),
    angle_deg: float = 0.0,
    origin: tuple[float, float] | None = None,
    color: bool = False,
) -> np.ndarray:
    """A grey 420 x 320 image with a board, centred (plus a sub-pixel offset) by default."""
    image = np.full((320, 420, 3) if color else (320, 420), 128, np.uint8)
    if origin is None:  # the board's outer top-left corner that centres it, turned or not
        c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
        half_w, half_h = squares[0] * square_px / 2, squares[1] * square_px / 2
        origin = (210.3 - (c * half_w - s * half_h), 160.6 - (s * half_w + c * half_h))
    draw_checkerboard(image, origin, square_px, squares, angle_deg)
    return image


@pytest.mark.parametrize(
    ("square_px", "squares", "angle_deg", "color", "square_mm"),
    [
        (12.0, (6, 5), 0.0, False, 5.0),
        (11.9, (6, 5), 0.0, True, 5.0),  # BGR input
        (20.3, (8, 6), 0.0, False, 25.0),  # a bigger board, 7 x 5 inner corners
        (16.7, (5, 7), 0.0, False, 10.0),  # taller than wide
        (25.0, (6, 5), 10.0, False, 20.0),  # a board turned 10 degrees
        (22.0, (6, 5), -30.0, False, 30.0),  # and -30
        (30.0, (4, 4), 0.0, False, 12.5),  # the smallest pattern: 3 x 3 inner corners
    ],
)
def test_scale_from_checkerboard(square_px, squares, angle_deg, color, square_mm) -> None:
    image = _board_image(square_px, squares, angle_deg, color=color)
    inner = (squares[0] - 1, squares[1] - 1)
    scale = scale_from_checkerboard(image, inner, square_mm)
    expected = square_mm / square_px
    err = 100 * (scale / expected - 1)
    print(f"square {square_px} px, {angle_deg:+.0f} deg: {scale:.5f} mm/px ({err:+.3f} %)")
    assert abs(err) < 0.3


def test_find_checkerboard_returns_the_grid_row_by_row() -> None:
    origin, square_px = (60.3, 70.6), 15.0  # an upright board
    corners = find_checkerboard(_board_image(square_px, origin=origin), (5, 4))
    assert corners.shape == (4, 5, 2)
    truth = np.stack(
        np.meshgrid(
            origin[0] + square_px * np.arange(1, 6), origin[1] + square_px * np.arange(1, 5)
        ),
        axis=-1,
    )
    # OpenCV may start the grid at either end; the positions, sorted, must match.
    found = corners.reshape(-1, 2)[np.lexsort(corners.reshape(-1, 2).T[::-1])]
    expected = truth.reshape(-1, 2)[np.lexsort(truth.reshape(-1, 2).T[::-1])]
    assert np.abs(found - expected).max() < 0.1


@pytest.mark.parametrize(
    ("image", "inner", "square_mm", "message"),
    [
        (np.full((200, 200), 200, np.uint8), (5, 4), 5.0, "no checkerboard with 5x4 inner"),
        (_board_image(15.0), (6, 4), 5.0, "no checkerboard with 6x4 inner"),  # wrong count
        (_board_image(15.0), (2, 4), 5.0, "at least 3x3"),
        (_board_image(15.0), (5,), 5.0, r"inner_corners must be \(cols, rows\)"),
        (_board_image(15.0), "5x4", 5.0, r"inner_corners must be \(cols, rows\)"),
        (_board_image(15.0), (5, 4), 0.0, "square_mm must be a finite length > 0"),
        (_board_image(15.0), (5, 4), -5.0, "square_mm must be a finite length > 0"),
        (_board_image(15.0), (5, 4), math.nan, "square_mm must be a finite length > 0"),
        (_board_image(15.0).astype(np.float32), (5, 4), 5.0, "must be 8-bit"),
        (np.zeros((20, 20, 4), np.uint8), (5, 4), 5.0, r"must be \(H, W\) or \(H, W, 3\)"),
        (np.zeros(20, np.uint8), (5, 4), 5.0, r"must be \(H, W\) or \(H, W, 3\)"),
    ],
)
def test_scale_from_checkerboard_errors(image, inner, square_mm, message) -> None:
    with pytest.raises(CalibrationError, match=message):
        scale_from_checkerboard(image, inner, square_mm)
