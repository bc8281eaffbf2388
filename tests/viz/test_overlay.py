"""Overlay pictures: a reading is drawn in colour, an unreliable one in grey, and a reading
with parts missing is drawn as far as it goes."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from spraycv.geometry import measure_cones
from spraycv.geometry.types import Line
from spraycv.viz.overlay import (
    APEX,
    LINE,
    NOTE_BG,
    UNRELIABLE,
    bgr_to_rgb_inplace,
    draw_overlay,
)


@pytest.fixture(scope="module")
def reading():
    mask = np.zeros((1024, 1024), np.uint8)  # a 40 deg plume from (512, 100) downwards
    cv2.fillPoly(mask, [np.array([[512, 100], [279, 740], [745, 740]], np.int32)], 1)
    (m,) = measure_cones(mask)
    assert m.reliable or not m.unreliable
    return mask, m


def pixels(canvas: np.ndarray, colour: tuple[int, int, int]) -> int:
    return int(np.all(canvas == np.array(colour, dtype=np.uint8), axis=2).sum())


CASES = [
    # (name, change to the measurement, colour that must appear, colour that must not)
    ("reliable", {}, LINE, UNRELIABLE),
    ("unreliable", {"unreliable": "poor_fit"}, UNRELIABLE, LINE),
    ("no left line", {"left_line": Line.nan()}, LINE, UNRELIABLE),
    ("no lines at all", {"left_line": Line.nan(), "right_line": Line.nan()}, APEX, LINE),
]


@pytest.mark.parametrize(("name", "change", "present", "absent"), CASES, ids=[c[0] for c in CASES])
def test_overlay_colours(reading, name, change, present, absent):
    mask, m = reading
    image = np.zeros((*mask.shape, 3), np.uint8)
    canvas = draw_overlay(image, None, [replace(m, **change)])
    assert canvas.shape == image.shape and canvas.dtype == np.uint8
    assert pixels(canvas, present) > 0, name
    assert pixels(canvas, absent) == 0, name


@pytest.mark.parametrize(("notes", "red"), [(None, False), ([""], False), (["OUT +6.2"], True)])
def test_a_reading_out_of_its_spec_is_labelled_on_red(reading, notes, red):
    mask, m = reading
    canvas = draw_overlay(np.zeros((*mask.shape, 3), np.uint8), None, [m], notes=notes)
    assert (pixels(canvas, NOTE_BG) > 100) is red


def test_unmeasured_reading_draws_nothing(reading):
    mask, m = reading
    image = np.zeros((*mask.shape, 3), np.uint8)
    blank = replace(m, included_angle_deg=float("nan"))
    assert not draw_overlay(image, None, [blank]).any()
    nan_apex = replace(m, apex=(float("nan"), float("nan")))
    canvas = draw_overlay(image, None, [nan_apex])
    assert all(pixels(canvas, c) == 0 for c in (LINE, APEX, UNRELIABLE))


@pytest.mark.parametrize("height", [1, 255, 256, 257, 700])
def test_bgr_to_rgb_inplace_swaps_every_band(height):
    picture = np.random.default_rng(height).integers(0, 256, (height, 37, 3), dtype=np.uint8)
    expected = picture[..., ::-1].copy()
    assert bgr_to_rgb_inplace(picture) is picture
    assert np.array_equal(picture, expected)


@pytest.mark.parametrize("width", [120, 300, 512])
def test_a_label_wider_than_the_image_is_drawn_smaller_not_cut(width):
    """An unreliable reading's reasons on a small frame: the whole box fits in the image
    (before, it ran off the left edge while touching the right one)."""
    from spraycv.viz.overlay import TEXT_BG, draw_label

    canvas = np.full((80, width, 3), 255, np.uint8)
    text = "unreliable: no_apex_support;apex_outside_image;no_spray_in_crop"
    draw_label(canvas, text, (width // 2, 40), 0.5, center=True)
    box = np.all(canvas == np.array(TEXT_BG, np.uint8), axis=2).any(axis=0)
    assert box.any() and not (box[0] and box[-1])


def boom_readings(n: int, pitch: int, length: int = 110) -> list:
    """n narrow plumes hanging from a boom, `pitch` px apart, measured on an 800 x 600 mask."""
    mask = np.zeros((600, 800), np.uint8)
    for k in range(n):
        x = 120 + k * pitch
        triangle = np.array([[x, 150], [x - 25, 150 + length], [x + 25, 150 + length]], np.int32)
        cv2.fillPoly(mask, [triangle], 1)
    readings = measure_cones(mask)
    assert len(readings) == n
    return readings


@pytest.mark.parametrize(
    ("n", "pitch", "length", "reason"),
    [
        (3, 110, 70, "poor_fit"),
        (5, 110, 70, "no_spray_in_crop"),
        (4, 130, 80, "no_apex_support;no_spray_in_crop"),
    ],
)
def test_a_booms_labels_keep_clear_of_each_other(n, pitch, length, reason):
    """A boom's unreliable readings carry long reasons: at the staggered places alone their
    labels ran into each other (the third drawer's outdoor frames); each now takes the first
    place along its axis that keeps clear of the labels drawn before it."""
    from spraycv.viz.overlay import draw_measurement, label_box, overlap

    readings = [replace(m, unreliable=reason) for m in boom_readings(n, pitch, length)]
    canvas = np.zeros((600, 800, 3), np.uint8)
    text = f"unreliable: {reason}"

    def staggered(m):
        along = (0.35 + 0.25 * (m.index % 2)) * m.length_px
        anchor = (round(m.apex[0] + m.axis[0] * along), round(m.apex[1] + m.axis[1] * along))
        return label_box(canvas.shape, text, anchor, 0.6, center=True)

    before = [staggered(m) for m in readings]
    assert any(overlap(a, b) for i, a in enumerate(before) for b in before[i + 1 :])
    taken: list = []
    for m in readings:
        draw_measurement(canvas, m, 0.6, taken=taken)
    boxes = taken[0::2]  # each reading adds its angle label, then its number
    assert len(boxes) == n
    assert not any(overlap(a, b) for i, a in enumerate(taken) for b in taken[i + 1 :])


FREE_CASES = [
    # (name, boxes taken, index of the anchor expected)
    ("nothing taken: the preferred place", [], 0),
    ("the preferred place taken: the next", [(80, 80, 120, 120)], 1),
    ("both taken, the second less", [(80, 80, 120, 120), (185, 95, 215, 105)], 1),
    ("both taken, the first less", [(95, 95, 105, 105), (150, 80, 250, 120)], 0),
]


@pytest.mark.parametrize(("name", "taken", "expected"), FREE_CASES, ids=[c[0] for c in FREE_CASES])
def test_free_anchor(name, taken, expected):
    from spraycv.viz.overlay import free_anchor

    anchors = [(100, 100), (200, 100)]
    assert free_anchor((400, 400, 3), "12.3", anchors, 0.5, taken) == anchors[expected], name
