"""One measurement schema: ConeMeasurement's fields are the columns of to_dict, of the
daemon's nozzle records and of the `measurements` table; adding a field is one edit plus one
migration; older databases still migrate and read; shipped migrations never change."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from spraycv.geometry import ConeMeasurement, Line, QualityFlag
from spraycv.geometry.types import NAN, exported_columns
from spraycv.stream.records import (
    EVENT_COLUMNS,
    OWN_NOZZLE_COLUMNS,
    Event,
    EventKind,
    FrameRecord,
    NozzleRecord,
    SpecStatus,
    nozzle_columns,
)
from spraycv.stream.schema import (
    MEASUREMENT_COLUMNS,
    MIGRATIONS,
    SCHEMA_VERSION,
    insert_sql,
    open_store,
    sql_columns,
    table_columns,
    table_layout,
)
from spraycv.stream.store import StoreError, StoreReader, StoreWriter

# what the writer adds to a record's columns: where the row comes from, its slot in its frame
STAMPED = {"site", "machine", "slot"}

# sha256 of each shipped migration: a migration may be appended, never edited (a database
# migrated by an older spraycv would otherwise differ from a fresh one).
SHIPPED_MIGRATIONS = (
    "7a13278bdc36510798cc650ca616e3fd90c7e4d9859633bde93fa56e86239e03",  # 1: first release
    "6bc4be87f0ab58be27afd504ce15b733dfecedef0f129975c46d764c5b5c9d7f",  # 2: calibrated
    "4cbdd1e742e9245797d458ce8f472cb96a8cabdf82410421d210a039d2242a62",  # 3: whole measurement
)


def measured() -> ConeMeasurement:
    """A measurement with every field set (no NaN), as a fit with calibration gives."""
    return ConeMeasurement(
        index=1, apex=(100.5, 40.25), axis=(0.0, 1.0), axis_source="boom", tilt_deg=0.5,
        half_angle_left_deg=30.25, half_angle_right_deg=29.75, included_angle_deg=60.0,
        symmetry_index=0.01, length_px=210.0, area_px=9000.0, band=(21.0, 84.0),
        left_line=Line((90.0, 60.0), (-0.5, 0.866)), right_line=Line((110.0, 60.0), (0.5, 0.866)),
        fit_rms_left_px=0.4, fit_rms_right_px=0.6, n_edge_points_left=40,
        n_edge_points_right=38, length_mm=105.0, area_mm2=2250.0, coverage_width_mm=577.35,
        overlap_mm=77.35, overlap_next_mm=80.0,
        flags=(QualityFlag.PLUMES_MERGED, QualityFlag.SHORT_BAND),
        confidence=0.35, unreliable="low_edge_contrast",
    )  # fmt: skip


def record(m: ConeMeasurement) -> NozzleRecord:
    return NozzleRecord.from_measurement(
        m, time=1000.0, source="cam", frame_no=7, nozzle_id=2, smoothed=59.5,
        spec_status=SpecStatus.OUT_OF_SPEC, model="m", backend="onnx",
    )  # fmt: skip


def stored_rows(path: Path, records: list[NozzleRecord]) -> list[dict]:
    """Write the records through the daemon's writer; the rows read back, without their id."""
    writer = StoreWriter(path, flush_every_s=0.05)
    writer.start()
    writer.put(FrameRecord(1000.0, "cam", 7, 640, 480, 0.05, records))
    writer.close()
    rows = StoreReader(path).measurements()
    return [{k: v for k, v in r.items() if k != "id" and k not in STAMPED} for r in rows]


def test_to_dict_the_record_and_the_table_hold_the_same_columns(tmp_path: Path) -> None:
    m = measured()
    exported = [c.name for c in exported_columns(ConeMeasurement)]
    assert list(m.to_dict()) == exported
    own = [c.name for c in OWN_NOZZLE_COLUMNS]
    assert own == ["time", "source", "frame_no", "nozzle_id", "smoothed_angle_deg",
                   "spec_status", "model", "backend"]  # fmt: skip
    assert list(record(m).to_dict()) == own + exported == list(MEASUREMENT_COLUMNS)
    conn = open_store(tmp_path / "db.sqlite")
    assert table_columns(conn, "measurements") == sql_columns(table_layout("measurements"))
    assert table_columns(conn, "events") == sql_columns(table_layout("events"))
    assert table_layout("measurements")[: len(MEASUREMENT_COLUMNS)] == nozzle_columns()
    assert table_layout("events")[: len(EVENT_COLUMNS)] == EVENT_COLUMNS
    conn.close()
    # and a stored row reads back as the record: same names, same values
    assert stored_rows(tmp_path / "db.sqlite", [record(m)]) == [record(m).to_dict()]


def test_every_field_is_written_with_the_type_of_its_column() -> None:
    m = measured()
    names = [c.name for c in exported_columns(ConeMeasurement)]
    for f in dataclasses.fields(ConeMeasurement):
        written = [n for n in names if n == f.name or n.startswith(f"{f.name}_")]
        assert written or f.name == "width_profile", f.name  # an array: no column
    values = m.to_dict()
    for c in exported_columns(ConeMeasurement):
        assert type(values[c.name]) is c.kind, c.name
    assert values["flags"] == "plumes_merged;short_band"
    assert (values["left_line_x"], values["left_line_dy"]) == (90.0, 0.866)
    assert (values["band_start_px"], values["band_end_px"]) == (21.0, 84.0)


def test_not_measured_is_none_and_enums_are_their_strings() -> None:
    row = record(ConeMeasurement(index=0)).to_dict()
    assert row["included_angle_deg"] is None and row["apex_x"] is None
    assert row["spec_status"] == "out_of_spec" and type(row["spec_status"]) is str
    event = Event(1.0, "cam", EventKind.ALARM_RAISED, 0, 61.0).to_dict()
    assert event["kind"] == "alarm_raised" and type(event["kind"]) is str
    assert [c.name for c in EVENT_COLUMNS] == list(event)


@dataclass(frozen=True)
class WithDensity(ConeMeasurement):
    """ConeMeasurement with one more field, as a newcomer would add it."""

    droplet_density: float = NAN


def test_a_new_field_is_one_edit_and_one_migration(tmp_path: Path) -> None:
    m = WithDensity(index=0, included_angle_deg=60.0, droplet_density=3.5)
    new = exported_columns(WithDensity)[-1]
    assert (new.name, new.kind) == ("droplet_density", float)
    assert m.to_dict()["droplet_density"] == record(m).to_dict()["droplet_density"] == 3.5
    conn = open_store(tmp_path / "db.sqlite")
    wanted = sql_columns((*nozzle_columns(WithDensity), *table_layout("measurements")[-3:]))
    assert wanted.items() - table_columns(conn, "measurements").items() == {
        ("droplet_density", "REAL")
    }
    # the one migration the new field needs
    conn.executescript("ALTER TABLE measurements ADD COLUMN droplet_density REAL;")
    assert table_columns(conn, "measurements") == wanted
    with conn:
        row = {**record(m).to_dict(), "site": "s", "machine": "m", "slot": 0}
        conn.execute(insert_sql("measurements", tuple(wanted)), row)
    assert conn.execute("SELECT droplet_density FROM measurements").fetchone()[0] == 3.5
    conn.close()


def test_a_field_of_a_type_with_no_layout_is_named() -> None:
    @dataclass(frozen=True)
    class WithList(ConeMeasurement):
        peaks: list[float] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match=r"WithList\.peaks: no column layout .* _LAYOUTS"):
        exported_columns(WithList)


def test_a_missing_migration_fails_at_start_not_at_every_write(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as conn:  # the current version number, an older table
        conn.executescript(MIGRATIONS[0] + f"PRAGMA user_version={SCHEMA_VERSION};")
    with pytest.raises(StoreError, match=r"measurements lacks the columns .*'axis_x'"):
        open_store(path)


def test_shipped_migrations_are_never_edited() -> None:
    assert len(MIGRATIONS) >= len(SHIPPED_MIGRATIONS)
    found = [hashlib.sha256(m.encode()).hexdigest() for m in MIGRATIONS]
    assert found[: len(SHIPPED_MIGRATIONS)] == list(SHIPPED_MIGRATIONS)


# a row as each shipped version wrote it (columns of that version only)
OLD_ROWS = {
    1: "INSERT INTO measurements (time, source, frame_no, nozzle_id, included_angle_deg,"
    " apex_x, flags, spec_status, model, backend)"
    " VALUES (1.0, 'cam', 7, 0, 110.0, 12.5, 'poor_fit', 'ok', 'm', 'pt')",
    2: "INSERT INTO measurements (time, source, frame_no, nozzle_id, included_angle_deg,"
    " apex_x, flags, spec_status, model, backend, coverage_width_mm)"
    " VALUES (1.0, 'cam', 7, 0, 110.0, 12.5, 'poor_fit', 'ok', 'm', 'pt', 800.0)",
}


@pytest.mark.parametrize("version", sorted(OLD_ROWS))
def test_an_older_database_migrates_and_keeps_its_rows(tmp_path: Path, version: int) -> None:
    path = tmp_path / f"v{version}.sqlite"
    with sqlite3.connect(path) as conn:  # a database as that release left it
        conn.executescript("".join(MIGRATIONS[:version]) + f"PRAGMA user_version={version};")
        conn.execute(OLD_ROWS[version])
        conn.execute("INSERT INTO events (time, source, kind) VALUES (1.0, 'cam', 'source_lost')")
    conn = open_store(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert table_columns(conn, "measurements") == sql_columns(table_layout("measurements"))
    conn.close()
    new = stored_rows(path, [record(measured())])
    old = new[0]
    assert (old["frame_no"], old["included_angle_deg"], old["apex_x"], old["flags"]) == (
        7, 110.0, 12.5, "poor_fit",
    )  # fmt: skip
    assert old["coverage_width_mm"] == (800.0 if version == 2 else None)
    assert old["axis_x"] is None and old["index"] is None  # columns it did not have
    assert new[1] == record(measured()).to_dict()
    assert StoreReader(path).events()[0]["kind"] == EventKind.SOURCE_LOST
