"""Line truth (spraycv/label/lines.py): the cone two lines define, the file format and its
one-line errors, the renderer's truth as lines, and the labelling session's pure functions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from spraycv.evaluation.heldout import read_records
from spraycv.label.lines import (
    ImageLines,
    LinesFile,
    LineTruthError,
    NozzleLines,
    cone_of,
    describe_lines,
    dump_lines,
    lines_from_records,
    parse_lines,
    truth_nozzles,
    turned_line,
    with_images,
)
from spraycv.label.session import (
    KEYS,
    Session,
    click,
    press,
    render_view,
    start_session,
    status_line,
    to_file,
)
from spraycv.label.window import window_available
from spraycv.paths import SAMPLES_DIR

# A downward cone with its apex at (100, 50): boundaries at -/+ 20 deg from image-down.
T20 = math.tan(math.radians(20))
LEFT = ((100 - 40 * T20, 90.0), (100 - 200 * T20, 250.0))  # image-left boundary
RIGHT = ((100 + 40 * T20, 90.0), (100 + 200 * T20, 250.0))


def _nozzle(lines) -> dict:
    return {"lines": [[list(p) for p in s] for s in lines]}


def _file(*nozzles, key: str = "a.jpg") -> str:
    return json.dumps({"images": {key: {"nozzles": [_nozzle(n) for n in nozzles]}}})


@pytest.mark.parametrize(
    "lines",
    [
        (LEFT, RIGHT),
        (RIGHT, LEFT),  # either order
        ((LEFT[1], LEFT[0]), RIGHT),  # either point first
        (((100.0, 50.0), LEFT[1]), ((100.0, 50.0), RIGHT[1])),  # apex + one point per side
    ],
    ids=["left-right", "right-left", "points-reversed", "apex-and-two-points"],
)
def test_two_lines_give_their_apex_and_included_angle(lines):
    cone = cone_of(lines)
    assert cone.apex == pytest.approx((100.0, 50.0), abs=1e-9)
    assert cone.included_deg == pytest.approx(40.0, abs=1e-9)
    assert cone.reach_px == pytest.approx(200 / math.cos(math.radians(20)))
    for dx, dy in cone.directions:  # away from the apex, into the spray
        assert dy > 0 and math.hypot(dx, dy) == pytest.approx(1.0)


# (file text, the one-line error: it names the file and the entry)
BAD_FILES = [
    ("{", "d/lines.json: not valid JSON: line 1 column 2"),
    ("[]", "d/lines.json: (top level): Input should be a valid dictionary"),
    ('{"format": "other/2"}', "d/lines.json: format: Input should be 'spraycv-lines/1'"),
    ('{"units": "mm"}', "d/lines.json: units: Input should be 'px'"),
    ('{"images": {"a.jpg": {}, "a.jpg": {}}}', 'd/lines.json: "a.jpg" appears twice'),
    ('{"images": {"a.jpg": {"nozles": []}}}', 'images["a.jpg"].nozles: Extra inputs'),
    (_file((LEFT, LEFT)), 'images["a.jpg"].nozzles[0]: the two lines are parallel'),
    (_file((LEFT, ((0, 0), (0, 1.5)))), "the two points of the second line are less than 2 px"),
    (
        _file((LEFT, ((100.0, 0.0), RIGHT[1]))),
        "the apex (where the lines cross) lies between the two points of the second line",
    ),
    (
        '{"images": {"x.y.jpg": {"nozzles": [{"lines": [[[0, 0], [NaN, 1]], [[0, 0], [1, 1]]]}]}}}',
        'images["x.y.jpg"].nozzles[0].lines: every coordinate must be a finite number',
    ),
    (
        '{"images": {"a.jpg": {"nozzles": [{"lines": [[[0, 0], [1, 1]]]}]}}}',
        'images["a.jpg"].nozzles[0].lines[1]: Field required',
    ),
]


@pytest.mark.parametrize(("text", "error"), BAD_FILES)
def test_a_bad_file_gets_one_line_naming_file_and_entry(text: str, error: str):
    with pytest.raises(LineTruthError) as info:
        parse_lines(text, Path("d/lines.json"))
    message = str(info.value)
    assert message.startswith("d/lines.json: ") and "\n" not in message
    assert error in message


def test_the_file_round_trips_with_one_text_line_per_boundary():
    truth = LinesFile(
        note="bench 3",
        images={
            "a.jpg": ImageLines(nozzles=[NozzleLines(lines=(LEFT, RIGHT), note="worn?")]),
            "b.jpg": ImageLines(nozzles=[]),
            "c.jpg": ImageLines(),
        },
    )
    text = dump_lines(truth)
    again = parse_lines(text, Path("lines.json"))
    assert again.images["b.jpg"].nozzles == [] and again.images["c.jpg"].nozzles is None
    assert again.labelled()[0][1][0].cone.included_deg == pytest.approx(40.0, abs=1e-3)
    assert f"[[{round(LEFT[0][0], 4)}, 90.0], [{round(LEFT[1][0], 4)}, 250.0]]" in text
    assert '"note": ""' not in text  # empty notes are left out


def test_new_photos_are_added_unlabelled_and_labels_are_kept():
    truth = LinesFile(images={"a.jpg": ImageLines(nozzles=[])})
    grown = with_images(truth, ["a.jpg", "b.jpg"])
    assert grown.images == {"a.jpg": ImageLines(nozzles=[]), "b.jpg": ImageLines()}
    described = describe_lines(grown, ["b.jpg"])
    assert described == [
        "a.jpg: labelled: no spray (no such photo here)",
        "b.jpg: not labelled yet",
        "2 photo(s): 1 labelled (0 nozzle(s)), 1 not labelled yet",
    ]


def test_rendered_truth_as_lines_keeps_apex_and_angle():
    records = read_records(SAMPLES_DIR)
    truth = lines_from_records(records, image_root="../samples")
    for record, (key, nozzles) in zip(records, truth.labelled(), strict=True):
        assert key == f"../samples/{record['image']}"
        spraying = [n for n in record["nozzles"] if n["visible"]]
        assert len(nozzles) == len(spraying)
        for nz, lines in zip(spraying, nozzles, strict=True):
            assert lines.cone.apex == pytest.approx(nz["apex"], abs=1e-9)
            assert lines.cone.included_deg == pytest.approx(nz["included_angle_deg"], abs=1e-9)
        # the same spray length, so the matcher pairs with the same apex tolerance
        lengths = [t["length_px"] for t in truth_nozzles(nozzles)]
        assert lengths == pytest.approx([nz["length_px"] for nz in spraying])


@pytest.mark.parametrize(("line", "degrees", "change"), [(0, 3.0, 3.0), (1, 3.0, -3.0)])
def test_a_turned_line_changes_the_angle_by_the_turn(line: int, degrees: float, change: float):
    lines = [LEFT, RIGHT]
    lines[line] = turned_line(lines[line], (100.0, 50.0), degrees)
    cone = cone_of(tuple(lines))
    assert cone.apex == pytest.approx((100.0, 50.0))
    assert cone.included_deg == pytest.approx(40.0 + change)


# --- the labelling session -------------------------------------------------------------

CLICKS = [*LEFT, *RIGHT]


def _run(steps, session: Session | None = None) -> Session:
    """Apply clicks ((x, y)) and key presses ("u", "e", ...) in order."""
    session = session or start_session(LinesFile(), ["a.jpg", "b.jpg"])
    for step in steps:
        session = press(session, ord(step))[0] if isinstance(step, str) else click(session, step)
    return session


# (steps, the entry of a.jpg: None = not labelled, else the nozzles' included angles)
SESSIONS = [
    ([], None),
    (CLICKS[:3], None),  # an unfinished nozzle is not saved
    (CLICKS, [40.0]),
    ([*CLICKS, "u"], None),  # undo reopens the nozzle
    ([*CLICKS, "u", CLICKS[3]], [40.0]),
    ([*CLICKS, *CLICKS], [40.0, 40.0]),
    ([*CLICKS, CLICKS[0], "x"], [40.0]),  # x drops the unfinished nozzle
    (["e"], []),  # no spray here
    (["e", "u"], None),
    ([CLICKS[0], "e"], None),  # refused: it has clicks
    ([*CLICKS[:2], LEFT[0], LEFT[1]], None),  # parallel: the 4th click is refused
    ([*CLICKS[:2], LEFT[0], LEFT[1], "u", CLICKS[3]], None),
    ([*CLICKS[:2], LEFT[0], LEFT[1], "u", CLICKS[2], CLICKS[3]], [40.0]),
    (["?", *CLICKS], [40.0]),  # an unbound key does nothing
]


@pytest.mark.parametrize(("steps", "angles"), SESSIONS)
def test_session_steps_give_the_entry(steps, angles):
    entry = to_file(_run(steps)).images["a.jpg"]
    got = None if entry.nozzles is None else [n.cone.included_deg for n in entry.nozzles]
    assert got == (None if angles is None else pytest.approx(angles))


def test_keys_move_between_photos_within_the_list_and_say_when_they_save():
    session = _run(["p"])
    assert session.current == 0
    session = _run(["n", "n", "n"])
    assert session.current == 1
    assert [k for k, key in KEYS.items() if key.quits] == ["q", "\x1b"]
    assert all(key.saves for key in KEYS.values() if key.quits)
    moved, key = press(_run(CLICKS[:1]), ord(" "))
    assert key is KEYS[" "] and moved.message == "unfinished nozzle not saved"
    assert press(moved, -1) == (moved, None)  # waitKey's "no key"


def test_a_session_resumes_at_the_first_unlabelled_photo_and_keeps_other_entries():
    base = LinesFile(
        note="lab",
        images={
            "a.jpg": ImageLines(nozzles=[NozzleLines(lines=(LEFT, RIGHT))], note="n1"),
            "gone.jpg": ImageLines(nozzles=[]),
        },
    )
    session = start_session(base, ["a.jpg", "b.jpg"])
    assert session.current == 1
    saved = to_file(_run(["e"], session))
    assert saved.note == "lab" and saved.images["a.jpg"] == base.images["a.jpg"]
    assert saved.images["gone.jpg"].nozzles == [] and saved.images["b.jpg"].nozzles == []


def test_status_line_says_where_and_what():
    assert status_line(_run([])) == "1/2 a.jpg | 0 nozzle(s), not labelled"
    assert status_line(_run(CLICKS)) == "1/2 a.jpg | 1 nozzle(s) | nozzle 1: 40.0 deg"
    assert "point 1/4 of the next" in status_line(_run([*CLICKS, CLICKS[0]]))
    refused = status_line(_run([*CLICKS[:2], LEFT[0], LEFT[1]]))
    assert "point 3/4 of the next | no cone: the two lines are parallel" in refused


@pytest.mark.parametrize("shape", [(300, 200), (300, 200, 3)], ids=["grey", "bgr"])
def test_the_view_draws_nozzles_and_clicks_without_touching_the_photo(shape):
    photo = np.zeros(shape, np.uint8)
    view = render_view(photo, _run([*CLICKS, CLICKS[0]]))
    assert view.shape == (300, 200, 3) and view.dtype == np.uint8 and not photo.any()
    assert view[150, 100 - int(100 * T20)].any()  # on the left boundary, 100 px down
    assert view[130:170, 90:110].sum() < view[130:170, 50:80].sum()  # the inside is not painted


@pytest.mark.parametrize(
    ("platform_env", "reason"), [({}, "no display"), ({"DISPLAY": ":0"}, None)]
)
def test_no_window_is_tried_without_a_display(platform_env, reason, monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    got = window_available(platform_env)
    if reason is None:  # with a display, this OpenCV build decides (headless here)
        assert got is None or "window support" in got
    else:
        assert got is not None and reason in got


def test_the_window_feeds_clicks_and_keys_to_the_session_and_saves(tmp_path, monkeypatch):
    """The window's loop with OpenCV's highgui scripted (there is no display here)."""
    import cv2

    from spraycv.label import window

    for name in ("a.png", "b.png"):
        cv2.imwrite(str(tmp_path / name), np.zeros((300, 200), np.uint8))
    callbacks, shown, saved = [], [], []
    script = iter([*[("click", p) for p in CLICKS], ("key", ord("n")), ("key", ord("e"))])

    def wait_key(_ms: int) -> int:
        kind, value = next(script, ("key", ord("q")))
        if kind == "click":
            callbacks[0](cv2.EVENT_LBUTTONDOWN, round(value[0]), round(value[1]), 0, None)
            return -1
        return value

    monkeypatch.setattr(cv2, "namedWindow", lambda *a: None)
    monkeypatch.setattr(cv2, "setMouseCallback", lambda _title, cb: callbacks.append(cb))
    monkeypatch.setattr(cv2, "imshow", lambda _title, picture: shown.append(picture.shape))
    monkeypatch.setattr(cv2, "waitKey", wait_key)
    monkeypatch.setattr(cv2, "getWindowProperty", lambda *a: 1.0)
    monkeypatch.setattr(cv2, "destroyAllWindows", lambda: None)

    session = window.run_window(
        tmp_path, start_session(LinesFile(), ["a.png", "b.png"]), saved.append
    )
    final = to_file(session)
    (nozzle,) = final.images["a.png"].nozzles
    assert nozzle.cone.included_deg == pytest.approx(40.0, abs=0.5)  # clicks land on pixels
    assert final.images["b.png"].nozzles == []
    assert saved[-1] == final and len(saved) == 3  # on n, on q, and at the end
    assert set(shown) == {(300, 200, 3)}
