"""Nozzle ids, smoothing and spec alarms: pure logic, table-driven."""

from __future__ import annotations

import math
import statistics
import threading
from types import SimpleNamespace

import numpy as np
import pytest

from spraycv.config.daemon import AlarmConfig, DaemonConfig, SpecRule, TrackingConfig
from spraycv.geometry import ConeMeasurement
from spraycv.stream.alarms import AlarmMonitor
from spraycv.stream.reader import Frame
from spraycv.stream.records import EventKind, SpecStatus
from spraycv.stream.tracking import NozzleTracker
from spraycv.stream.worker import InferenceWorker

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


def reading(angle: float | None, apex: tuple[float, float] = (100, 50), **kw) -> ConeMeasurement:
    """A measurement as the tracker sees it (None: not measured this frame)."""
    return ConeMeasurement(0, apex=apex, included_angle_deg=math.nan if angle is None else angle,
                           **kw)  # fmt: skip


UNRELIABLE = {"unreliable": "low_edge_contrast", "confidence": 0.2}


def feed(tracker: NozzleTracker, frames: list) -> list:
    """Each frame's NozzleReading of nozzle 0 (a frame: an angle, None, or a measurement)."""
    (nozzle,) = tracker.assign([(100, 50)], now=0.0)
    measurements = [f if isinstance(f, ConeMeasurement) else reading(f) for f in frames]
    return [tracker.observe(nozzle, m) for m in measurements]


@pytest.mark.parametrize(
    ("smoothing", "angles", "expected"),
    [
        ("median", [100, 101, 140, 102, 99], 101.0),  # a one-frame glitch is ignored
        ("median", [100, None, 110], 105.0),  # a missed frame adds nothing
        ("trimmed_mean", [100, 101, 140, 102, 99], 101.0),  # the glitch is trimmed off
        ("trimmed_mean", [100, 104], 102.0),  # too few to trim: the mean
        ("ema", [100, 110], 103.0),  # alpha 0.3
        ("none", [100, 120], 120.0),
    ],
)
def test_smoothing(smoothing: str, angles: list, expected: float) -> None:
    config = TrackingConfig(smoothing=smoothing, window=5, ema_alpha=0.3, trim_fraction=0.2)
    out = feed(NozzleTracker(config), angles)
    assert out[-1].angle_deg == pytest.approx(expected)


def test_the_apex_is_smoothed_with_the_angle() -> None:
    frames = [reading(60, apex) for apex in [(100, 50), (102, 50), (140, 90), (98, 52), (100, 48)]]
    out = feed(NozzleTracker(TrackingConfig(smoothing="median", window=5)), frames)
    assert out[-1].apex == pytest.approx((100.0, 50.0))


def test_a_window_forgets_old_readings() -> None:
    out = feed(NozzleTracker(TrackingConfig(smoothing="median", window=3)), [50, 50, 50, 70, 70])
    assert out[-1].angle_deg == 70.0


@pytest.mark.parametrize("smoothing", ["trimmed_mean", "median", "ema", "none"])
def test_unreliable_and_missed_readings_are_skipped(smoothing: str) -> None:
    """They give no smoothed angle of their own and leave the smoothing and spread as is."""
    config = TrackingConfig(smoothing=smoothing, window=5)
    frames = [100, reading(150, **UNRELIABLE), None, 102]
    out = feed(NozzleTracker(config), frames)
    reference = feed(NozzleTracker(config), [100, 102])
    assert [r.angle_deg is None for r in out] == [False, True, True, False]
    assert out[-1] == reference[-1]
    assert out[2].raw_spread.n == 1  # the unreliable 150 is in no spread


def test_spread_of_raw_and_smoothed_readings() -> None:
    config = TrackingConfig(smoothing="median", window=3, spread_window=4)
    apexes = [(100, 50), (103, 54), (100, 50), (100, 50), (100, 50)]
    angles = [60, 64, 60, 62, 60]
    out = feed(NozzleTracker(config), [reading(a, p) for a, p in zip(angles, apexes, strict=True)])
    raw = out[-1].raw_spread  # the last 4: 64, 60, 62, 60 and one apex 5 px off
    assert raw.n == 4
    assert raw.angle_sd_deg == pytest.approx(statistics.stdev([64, 60, 62, 60]))
    assert raw.angle_range_deg == pytest.approx(4.0)
    assert raw.apex_sd_px == pytest.approx(
        math.sqrt(statistics.variance([103, 100, 100, 100]) + statistics.variance([54, 50, 50, 50]))
    )
    assert raw.apex_range_px == pytest.approx(5.0)
    smoothed = out[-1].smoothed_spread  # the last 4 medians of up to 3: 62, 60, 62, 60
    assert smoothed.n == 4 and smoothed.angle_range_deg == pytest.approx(2.0)
    apex_x, apex_y = [101.5, 100, 100, 100], [52, 50, 50, 50]
    assert smoothed.apex_sd_px == pytest.approx(
        math.sqrt(statistics.variance(apex_x) + statistics.variance(apex_y))
    )


def test_spread_needs_two_readings_and_serves_json() -> None:
    (only,) = feed(NozzleTracker(TrackingConfig()), [55])
    assert only.raw_spread.n == 1 and math.isnan(only.raw_spread.angle_sd_deg)
    served = only.spread_dict()
    assert served["raw"] == {"n": 1, "angle_sd_deg": None, "angle_range_deg": None,
                             "apex_sd_px": None, "apex_range_px": None}  # fmt: skip
    assert served["smoothed"]["n"] == 1


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


@pytest.mark.parametrize(
    ("frames", "statuses", "transitions"),
    [
        # an unreliable reading neither counts towards an alarm nor breaks the run
        ([120, "u", 120, 120], ["out_of_spec", "unreliable", "out_of_spec", "alarm"], [3]),
        # nor clears one: an open alarm stays open through unreliable in-spec readings
        ([120, 120, 120, "u", "u", "u", 110, 110, 110],
         ["out_of_spec"] * 2 + ["alarm"] * 6 + ["ok"], [2, 8]),
        (["u"], ["unreliable"], []),
    ],
)  # fmt: skip
def test_alarms_ignore_unreliable_readings(frames: list, statuses: list, transitions: list) -> None:
    monitor = AlarmMonitor(AlarmConfig(raise_after=3, clear_after=3, snapshot_dir=None))
    seen, changed = [], []
    for i, frame in enumerate(frames):
        unreliable = "low_edge_contrast" if frame == "u" else ""
        angle = 110.0 if frame == "u" else frame  # an in-spec angle that must not count
        status, transition = monitor.update("cam", 0, angle, RULE, unreliable)
        seen.append(str(status))
        if transition:
            changed.append(i)
    assert seen == statuses
    assert changed == transitions


def test_the_apex_pools_its_own_longer_window() -> None:
    """A nozzle's orifice does not move while it sprays: its apex pools more readings."""
    config = TrackingConfig(smoothing="median", window=1, apex_window=3)
    frames = [reading(a, (x, 50)) for a, x in [(50, 100), (60, 110), (70, 120)]]
    out = feed(NozzleTracker(config), frames)
    assert out[-1].angle_deg == 70.0 and out[-1].apex == (110.0, 50.0)


def test_ids_follow_the_smoothed_apex_through_a_wild_one() -> None:
    """A wide fan's apex (where its boundary lines meet) can jump far in one frame: matched
    against the smoothed apex, the next frame still finds its nozzle."""
    tracker = NozzleTracker(TrackingConfig(max_match_px=40, smoothing="median", window=5))
    (nozzle,) = tracker.assign([(100, 50)], now=0.0)
    for t, apex in enumerate([(100, 50), (101, 50), (100, 85)]):  # the last jumps 35 px
        assert tracker.assign([apex], now=float(t)) == [nozzle]
        tracker.observe(nozzle, reading(60, apex))
    assert tracker.assign([(100, 52)], now=4.0) == [nozzle]  # 33 px from the last seen
    assert tracker.assign([(100, 95)], now=5.0) == [1]  # 45 px from the smoothed one: new


def test_the_worker_records_an_unreliable_reading_unchecked() -> None:
    """The worker's glue: tracker, alarms and record for constructed measurements. An
    unreliable reading keeps its raw angle and reason in the record, gets no smoothed angle
    and the unreliable status, and does not count towards the nozzle's alarm."""
    config = DaemonConfig.model_validate({
        "sources": [{"name": "cam", "url": "x.mp4"}],
        "spec": {"nominal_deg": 110, "tolerance_deg": 5},
        "alarms": {"raise_after": 2, "snapshot_dir": None},
    })  # fmt: skip
    predictor = SimpleNamespace(name="stub (test)", backend="none")
    worker = InferenceWorker(config, {"cam": None}, threading.Condition(), predictor, None, None)
    frame = Frame("cam", 0, 0.0, np.zeros((4, 4, 3), np.uint8))
    (nozzle,) = worker.trackers["cam"].assign([(100, 50)], 0.0)
    records = []
    for m in [reading(130), reading(131, **UNRELIABLE), reading(130)]:
        records.append(worker._nozzle_record(frame, m, nozzle))
    (first, _), (doubtful, raised_on_doubt), (third, raised) = records
    assert (first.spec_status, doubtful.spec_status) == ("out_of_spec", "unreliable")
    assert doubtful.smoothed_angle_deg is None and doubtful.to_dict()["unreliable"]
    assert doubtful.to_dict()["included_angle_deg"] == 131.0  # the raw reading is kept
    assert raised_on_doubt is None and raised is EventKind.ALARM_RAISED  # 2 reliable ones
    assert third.served()["spread"]["raw"]["n"] == 2
