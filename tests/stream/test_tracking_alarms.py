"""Nozzle ids, smoothing and spec alarms: pure logic, table-driven."""

from __future__ import annotations

import math

import pytest

from spraycv.config.daemon import AlarmConfig, SpecRule, TrackingConfig
from spraycv.stream.alarms import AlarmMonitor
from spraycv.stream.records import SpecStatus
from spraycv.stream.tracking import NozzleTracker

NAN = (math.nan, math.nan)


def test_first_frame_numbers_nozzles_left_to_right() -> None:
    tracker = NozzleTracker(TrackingConfig())
    assert tracker.assign([(300, 50), (100, 52), (500, 49)], now=0.0) == [1, 0, 2]


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ([(501, 50), (99, 51), (301, 49)], [2, 0, 1]),  # any order, small jitter
        ([(300, 50)], [1]),  # others missed this frame
        ([(300, 50), NAN], [1, None]),  # a plume without an apex gets no id
        ([(100, 50), (700, 50)], [0, 3]),  # a nozzle far from all known ones is new
    ],
)
def test_ids_follow_the_apex(frame: list, expected: list) -> None:
    tracker = NozzleTracker(TrackingConfig(max_match_px=40))
    tracker.assign([(100, 50), (300, 50), (500, 50)], now=0.0)
    assert tracker.assign(frame, now=1.0) == expected


def test_stale_tracks_are_forgotten() -> None:
    tracker = NozzleTracker(TrackingConfig(forget_after_s=5))
    tracker.assign([(100, 50), (300, 50)], now=0.0)
    tracker.assign([(100, 50)], now=4.0)
    tracker.assign([(100, 50)], now=8.0)  # (300, 50) unseen for 8 s
    assert set(tracker.tracks) == {0}
    assert tracker.assign([(300, 50)], now=9.0) == [2]


@pytest.mark.parametrize(
    ("smoothing", "angles", "expected"),
    [
        ("median", [100, 101, 140, 102, 99], 101.0),  # a one-frame glitch is ignored
        ("median", [100, None, 110], 105.0),  # a missed frame adds nothing
        ("ema", [100, 110], 103.0),  # alpha 0.3
        ("none", [100, 120], 120.0),
    ],
)
def test_smoothing(smoothing: str, angles: list, expected: float) -> None:
    tracker = NozzleTracker(TrackingConfig(smoothing=smoothing, window=5, ema_alpha=0.3))
    (nozzle,) = tracker.assign([(100, 50)], now=0.0)
    out = None
    for angle in angles:
        out = tracker.smooth(nozzle, angle)
    assert out == pytest.approx(expected)


RULE = SpecRule(nominal_deg=110, tolerance_deg=5)


@pytest.mark.parametrize(
    ("angles", "statuses", "transitions"),
    [
        ([110, 112, 108], ["ok"] * 3, []),
        ([120, 120], ["out_of_spec"] * 2, []),  # not yet N=3 in a row
        ([120, 120, 120, 120], ["out_of_spec", "out_of_spec", "alarm", "alarm"], [2]),
        ([120, 120, 110, 120, 120], ["out_of_spec"] * 2 + ["ok"] + ["out_of_spec"] * 2, []),
        (
            [120, 120, 120, 110, 110, 110],
            ["out_of_spec", "out_of_spec", "alarm", "alarm", "alarm", "ok"],
            [2, 5],
        ),
        ([120, 120, 120, None, 110], ["out_of_spec"] * 2 + ["alarm"] * 3, [2]),
        ([None], ["not_measured"], []),
    ],
)
def test_alarm_debounce(angles: list, statuses: list, transitions: list) -> None:
    monitor = AlarmMonitor(AlarmConfig(raise_after=3, clear_after=3, snapshot_dir=None))
    seen, changed = [], []
    for i, angle in enumerate(angles):
        status, transition = monitor.update("cam", 0, angle, RULE)
        seen.append(str(status))
        if transition:
            changed.append(i)
    assert seen == statuses
    assert changed == transitions


def test_no_rule_means_no_spec() -> None:
    monitor = AlarmMonitor(AlarmConfig())
    assert monitor.update("cam", 0, 10.0, None) == (SpecStatus.NO_SPEC, None)


def test_alarms_are_per_nozzle() -> None:
    monitor = AlarmMonitor(AlarmConfig(raise_after=1))
    monitor.update("cam", 0, 130.0, RULE)
    monitor.update("cam", 1, 110.0, RULE)
    assert monitor.active() == [("cam", 0)]
