"""SQLite store: schema migrations, clear errors, batched writes that lose nothing."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from spraycv.geometry import ConeMeasurement
from spraycv.stream.records import Event, EventKind, FrameRecord, NozzleRecord, SpecStatus
from spraycv.stream.schema import SCHEMA_VERSION, open_store
from spraycv.stream.store import StoreError, StoreReader, StoreWriter


def nozzle(t: float, frame_no: int, nozzle_id: int, angle: float = 110.0) -> NozzleRecord:
    m = ConeMeasurement(
        index=nozzle_id, apex=(100.0 * nozzle_id, 50.0), tilt_deg=0.0,
        half_angle_left_deg=angle / 2, half_angle_right_deg=angle / 2, included_angle_deg=angle,
        length_px=200.0, area_px=1000.0,
    )  # fmt: skip
    return NozzleRecord.from_measurement(
        m, time=t, source="cam", frame_no=frame_no, nozzle_id=nozzle_id, smoothed=angle,
        spec_status=SpecStatus.OK, model="m", backend="pytorch",
    )  # fmt: skip


def frame(t: float, frame_no: int, n: int = 2) -> FrameRecord:
    return FrameRecord(
        t, "cam", frame_no, 640, 480, 0.05, [nozzle(t, frame_no, i) for i in range(n)]
    )


def test_fresh_database_is_migrated_to_the_current_version(tmp_path: Path) -> None:
    conn = open_store(tmp_path / "db.sqlite")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    open_store(tmp_path / "db.sqlite").close()  # a second open migrates nothing


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer than this spraycv"):
        open_store(path)


@pytest.mark.parametrize(
    "where",
    [
        lambda tmp: tmp / "a_file" / "db.sqlite",  # parent is a file
        lambda tmp: tmp / "a_dir",  # the path is a folder
    ],
    ids=["parent-is-a-file", "path-is-a-folder"],
)
def test_unwritable_path_gives_a_clear_error(tmp_path: Path, where) -> None:
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_dir").mkdir()
    with pytest.raises(StoreError, match="database"):
        StoreWriter(where(tmp_path))


def test_writer_commits_everything_handed_over_before_close(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    writer = StoreWriter(path, flush_every_s=10.0)  # no timed flush: close must drain
    writer.start()
    t0 = time.time()
    for i in range(500):
        writer.put(frame(t0 + i * 0.01, i, n=i % 3))
    writer.put(Event(t0, "cam", EventKind.ALARM_RAISED, 1, 120.0, "nozzle 1: 120 deg"))
    writer.close()
    counts = StoreReader(path).counts()
    expected_measurements = sum(i % 3 for i in range(500))
    assert counts == {"frames": 500, "measurements": expected_measurements, "events": 1}
    assert writer.frames_written == 500
    assert writer.measurements_written == expected_measurements


def test_queries_by_time_and_source(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    writer = StoreWriter(path, flush_every_s=0.05)
    writer.start()
    for i in range(10):
        writer.put(frame(1000.0 + i, i))
    writer.put(Event(1005.0, "cam", EventKind.ALARM_RAISED, 0, 120.0, "x"))
    writer.close()
    store = StoreReader(path)
    rows = store.measurements(since=1003.0, until=1006.0)
    assert sorted({r["frame_no"] for r in rows}) == [3, 4, 5]
    assert store.measurements(source="other") == []
    assert store.events(since=1005.0)[0]["kind"] == "alarm_raised"
    assert store.sources() == ["cam"]
    assert [r["nozzle_id"] for r in store.frame_measurements("cam", 4)] == [0, 1]
    assert len(store.measurements(limit=3)) == 3


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_retention_deletes_old_rows_on_a_machine_booted_a_minute_ago(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    wall, uptime = FakeClock(1_800_000_000.0), FakeClock(60.0)  # booted a minute ago
    writer = StoreWriter(path, 0.05, retention_days=1.0, wall_clock=wall, monotonic=uptime)
    writer.start()
    writer.put(frame(wall.now - 3 * 86400, 0))  # three days old
    writer.put(frame(wall.now, 1))
    writer.close()
    writer = StoreWriter(path, 0.05, retention_days=1.0, wall_clock=wall, monotonic=uptime)
    writer.start()  # retention is due at the first pass, whatever the uptime
    writer.close()
    assert StoreReader(path).counts()["frames"] == 1


def test_retention_runs_again_only_after_its_period(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    wall, uptime = FakeClock(1_800_000_000.0), FakeClock(5.0)
    writer = StoreWriter(
        path, 0.05, retention_days=1.0, retention_every_s=3600, wall_clock=wall, monotonic=uptime
    )
    writer._apply_retention()  # the first pass prunes (nothing yet)
    writer._write([frame(wall.now - 2 * 86400, 0)])
    uptime.now += 3599
    writer._apply_retention()
    assert StoreReader(path).counts()["frames"] == 1  # not due yet
    uptime.now += 1
    writer._apply_retention()
    assert StoreReader(path).counts()["frames"] == 0
    writer.close()


def test_reader_on_a_missing_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such database"):
        StoreReader(tmp_path / "none.sqlite").counts()
