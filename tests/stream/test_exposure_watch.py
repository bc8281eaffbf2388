"""The exposure watch: one event when a camera's frames turn too dark or flat, one when they
show a scene again."""

from __future__ import annotations

import pytest

from spraycv.stream.exposure_watch import ExposureWatch

# (levels of successive frames of one source, the events they raise)
CASES = [
    ("lit throughout", [200, 150, 90], []),
    ("turns dark, stays dark", [200, 40, 30, 50], ["under_exposed"]),
    ("dark from the first frame", [20, 25], ["under_exposed"]),
    ("hovers at the threshold", [200, 60, 66, 62, 70, 63], ["under_exposed"]),
    ("dark, then lit again", [200, 40, 79, 81, 120], ["under_exposed", "exposure_restored"]),
    (
        "unknown levels change nothing",
        [None, 40, None, 200],
        ["under_exposed", "exposure_restored"],
    ),
]


# (bright level and brightness span of successive frames of one source, the events)
FLAT_CASES = [
    ("a scene throughout", [(200, 150), (200, 9), (200, 30)], []),
    ("saturated", [(200, 150), (255, 0), (255, 2)], ["flat_frames"]),
    (
        "flat, then a scene again",
        [(200, 150), (128, 3), (128, 12), (128, 17)],
        ["flat_frames", "exposure_restored"],
    ),
    (
        "black is dark before flat",
        [(200, 150), (0, 0), (255, 0)],
        ["under_exposed", "flat_frames"],
    ),
    ("no span known", [(255, None), (255, 0)], ["flat_frames"]),
]


@pytest.mark.parametrize(("name", "frames", "events"), FLAT_CASES, ids=[c[0] for c in FLAT_CASES])
def test_flat_frames_raise_one_event_per_change(name: str, frames: list, events: list[str]):
    watch = ExposureWatch()
    got = [watch.update("cam", level, span) for level, span in frames]
    assert [str(e) for e in got if e is not None] == events


@pytest.mark.parametrize(("name", "levels", "events"), CASES, ids=[c[0] for c in CASES])
def test_one_event_per_change(name: str, levels: list, events: list[str]) -> None:
    watch = ExposureWatch()
    got = [watch.update("cam", level) for level in levels]
    assert [str(e) for e in got if e is not None] == events


def test_sources_are_watched_apart() -> None:
    watch = ExposureWatch()
    assert str(watch.update("a", 30.0)) == "under_exposed"
    assert watch.update("b", 200.0) is None
    assert watch.update("a", 35.0) is None
    assert "30 of 255" in ExposureWatch.message(watch.update("b", 30.0), 30.0)


def test_a_flat_frame_event_says_what_to_check() -> None:
    message = ExposureWatch.message(ExposureWatch().update("a", 255.0, 0.0), 255.0)
    assert message.startswith("a flat frame (its brightness spans fewer than 8 grey levels")
    assert message.endswith("no plume here does not mean no spray; check the camera")
