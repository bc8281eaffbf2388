"""The stored schema, one versioned definition for SQLite and PostgreSQL: the append-only
migrations, the tables' columns (derived from the records), the batches the writer inserts,
and retention. spraycv.stream.store writes and reads through it.

Every inferred frame goes into `frames` (even with no spray) and each nozzle into
`measurements`, so "nothing lost" is checkable: rows == frames the daemon inferred. Every
row carries its `site` and `machine`; a frame is keyed by (machine, source, frame_no, time)
and its nozzles by their slot in it, and every insert skips a row whose key is stored
already, so a batch sent twice (a retry after a lost reply) is stored once.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spraycv.geometry.types import Column
from spraycv.stream.database import (
    Database,
    Params,
    SqliteDatabase,
    Statement,
    StoreError,
)
from spraycv.stream.records import EVENT_COLUMNS, Event, FrameRecord, nozzle_columns

# Migration i brings the schema from version i to i + 1; never edit one that has shipped.
# They are written in SQLite's dialect; PostgreSQL reads them through database.translate_ddl.
# The `measurements` columns are the nozzle record's (records.nozzle_columns): a field added
# to ConeMeasurement needs a migration adding its column here, with the type SQL_TYPES gives
# (tests/stream/test_schema.py fails, naming the column, until it is added).
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE frames (
        id INTEGER PRIMARY KEY, time REAL NOT NULL, source TEXT NOT NULL,
        frame_no INTEGER NOT NULL, width INTEGER, height INTEGER,
        n_nozzles INTEGER NOT NULL, latency_s REAL
    );
    CREATE INDEX frames_source_time ON frames (source, time);
    CREATE TABLE measurements (
        id INTEGER PRIMARY KEY, time REAL NOT NULL, source TEXT NOT NULL,
        frame_no INTEGER NOT NULL, nozzle_id INTEGER,
        included_angle_deg REAL, smoothed_angle_deg REAL,
        half_angle_left_deg REAL, half_angle_right_deg REAL, tilt_deg REAL,
        length_px REAL, length_mm REAL, area_px REAL, apex_x REAL, apex_y REAL,
        flags TEXT NOT NULL DEFAULT '', spec_status TEXT NOT NULL,
        model TEXT NOT NULL, backend TEXT NOT NULL
    );
    CREATE INDEX measurements_time ON measurements (time);
    CREATE INDEX measurements_source_time ON measurements (source, time);
    CREATE TABLE events (
        id INTEGER PRIMARY KEY, time REAL NOT NULL, source TEXT NOT NULL, kind TEXT NOT NULL,
        nozzle_id INTEGER, angle_deg REAL, message TEXT NOT NULL DEFAULT '', snapshot TEXT
    );
    CREATE INDEX events_time ON events (time);
    """,
    # 2: calibrated outputs (mm/px and the rig's nozzle height and spacing)
    """
    ALTER TABLE measurements ADD COLUMN area_mm2 REAL;
    ALTER TABLE measurements ADD COLUMN coverage_width_mm REAL;
    ALTER TABLE measurements ADD COLUMN overlap_mm REAL;
    """,
    # 3: the whole measurement (ConeMeasurement.to_dict), as CSV files and the API have it
    """
    ALTER TABLE measurements ADD COLUMN "index" INTEGER;
    ALTER TABLE measurements ADD COLUMN axis_x REAL;
    ALTER TABLE measurements ADD COLUMN axis_y REAL;
    ALTER TABLE measurements ADD COLUMN axis_source TEXT;
    ALTER TABLE measurements ADD COLUMN symmetry_index REAL;
    ALTER TABLE measurements ADD COLUMN band_start_px REAL;
    ALTER TABLE measurements ADD COLUMN band_end_px REAL;
    ALTER TABLE measurements ADD COLUMN left_line_x REAL;
    ALTER TABLE measurements ADD COLUMN left_line_y REAL;
    ALTER TABLE measurements ADD COLUMN left_line_dx REAL;
    ALTER TABLE measurements ADD COLUMN left_line_dy REAL;
    ALTER TABLE measurements ADD COLUMN right_line_x REAL;
    ALTER TABLE measurements ADD COLUMN right_line_y REAL;
    ALTER TABLE measurements ADD COLUMN right_line_dx REAL;
    ALTER TABLE measurements ADD COLUMN right_line_dy REAL;
    ALTER TABLE measurements ADD COLUMN fit_rms_left_px REAL;
    ALTER TABLE measurements ADD COLUMN fit_rms_right_px REAL;
    ALTER TABLE measurements ADD COLUMN n_edge_points_left INTEGER;
    ALTER TABLE measurements ADD COLUMN n_edge_points_right INTEGER;
    ALTER TABLE measurements ADD COLUMN overlap_next_mm REAL;
    """,
    # 4: how far a reading can be trusted (spraycv.geometry.confidence)
    """
    ALTER TABLE measurements ADD COLUMN confidence REAL;
    ALTER TABLE measurements ADD COLUMN unreliable TEXT;
    """,
    # 5: a fleet on one database: where each row comes from, and the keys that make a
    # retried batch a no-op (frame numbers restart with each run: the capture time is in
    # the key; `slot` is a nozzle row's place in its frame)
    """
    ALTER TABLE frames ADD COLUMN site TEXT NOT NULL DEFAULT '';
    ALTER TABLE frames ADD COLUMN machine TEXT NOT NULL DEFAULT '';
    ALTER TABLE measurements ADD COLUMN site TEXT NOT NULL DEFAULT '';
    ALTER TABLE measurements ADD COLUMN machine TEXT NOT NULL DEFAULT '';
    ALTER TABLE measurements ADD COLUMN slot INTEGER;
    ALTER TABLE events ADD COLUMN site TEXT NOT NULL DEFAULT '';
    ALTER TABLE events ADD COLUMN machine TEXT NOT NULL DEFAULT '';
    CREATE UNIQUE INDEX frames_key ON frames (machine, source, frame_no, time);
    CREATE UNIQUE INDEX measurements_key ON measurements (machine, source, frame_no, time, slot);
    CREATE UNIQUE INDEX events_key
        ON events (machine, source, time, kind, COALESCE(nozzle_id, -1));
    CREATE INDEX frames_machine_time ON frames (machine, time);
    CREATE INDEX measurements_machine_time ON measurements (machine, time);
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)

SQL_TYPES: dict[type, str] = {float: "REAL", int: "INTEGER", str: "TEXT"}  # by Column.kind
MEASUREMENT_COLUMNS = tuple(c.name for c in nozzle_columns())
TABLES = ("frames", "measurements", "events")


def _stamped(name: str) -> Callable[[Any], Any]:
    return lambda row: row[name]


# Columns the writer adds to every row (records do not know where they are stored).
ORIGIN_COLUMNS = (
    Column("site", str, _stamped("site")),
    Column("machine", str, _stamped("machine")),
)
SLOT_COLUMN = Column("slot", int, _stamped("slot"))
FRAME_COLUMNS = ("time", "source", "frame_no", "width", "height", "n_nozzles", "latency_s")


def table_layout(table: str) -> tuple[Column, ...]:
    """The record columns a table holds, then the writer's (schema checks compare these)."""
    layouts = {
        "measurements": (*nozzle_columns(), *ORIGIN_COLUMNS, SLOT_COLUMN),
        "events": (*EVENT_COLUMNS, *ORIGIN_COLUMNS),
    }
    return layouts[table]


@dataclass(frozen=True)
class Origin:
    """Where rows come from: set in the daemon config, the same on every row it writes."""

    site: str = "default"
    machine: str = field(default_factory=socket.gethostname)


def check_version(db: Database, found: int) -> None:
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"{db.label}: schema version {found} is newer than this spraycv ({SCHEMA_VERSION});"
            " upgrade spraycv or use another database"
        )


def check_columns(db: Database) -> None:
    """StoreError naming any record column the tables lack: a migration is missing, and
    every write would fail (the check runs at start-up instead)."""
    for table in ("measurements", "events"):
        missing = sql_columns(table_layout(table)).items() - db.table_columns(table).items()
        if missing:
            raise StoreError(
                f"{db.label}: table {table} lacks the columns {sorted(missing)}: add a"
                " migration to spraycv/stream/schema.py"
            )


def prepare_schema(db: Database, migrate: bool = True) -> None:
    """Check the schema version, migrate if allowed and behind, check the columns.

    migrate False: a role that may not change the schema (a daemon's, a dashboard's) only
    checks, and says who must migrate.
    """
    found = db.schema_version()
    check_version(db, found)
    if found < SCHEMA_VERSION and not migrate:
        raise StoreError(
            f"{db.label}: schema version {found}, this spraycv needs {SCHEMA_VERSION}: run"
            " `spraycv db migrate` as the database owner"
        )
    if found < SCHEMA_VERSION:
        db.migrate(MIGRATIONS)
    check_columns(db)


def open_sqlite(path: Path) -> SqliteDatabase:
    """Create the folder and file if needed, check it is writable, migrate."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{path}: cannot create the database folder: {exc}") from None
    db = SqliteDatabase(path)
    try:
        prepare_schema(db)
        # a read-only file or folder only fails at the first write: try one now
        db.execute("CREATE TABLE IF NOT EXISTS _write_check (x)")
        db.execute("DROP TABLE _write_check")
    except sqlite3.Error as exc:
        db.close()
        raise StoreError(f"{path}: the database is not writable: {exc}") from None
    except StoreError:
        db.close()
        raise
    return db


def open_store(path: Path) -> sqlite3.Connection:
    """A migrated SQLite file's writing connection (tests and tools)."""
    conn = open_sqlite(path).conn
    assert conn is not None
    return conn


# -- rows ----------------------------------------------------------------------------------
@dataclass
class Batch:
    """The rows of some records, stamped with their origin: what one transaction stores."""

    frames: list[Params] = field(default_factory=list)
    measurements: list[Params] = field(default_factory=list)
    events: list[Params] = field(default_factory=list)

    @classmethod
    def of(cls, items: Sequence[FrameRecord | Event], origin: Origin) -> Batch:
        stamp = {"site": origin.site, "machine": origin.machine}
        batch = cls()
        for item in items:
            if isinstance(item, Event):
                batch.events.append({**item.to_dict(), **stamp})
                continue
            batch.frames.append({**frame_row(item), **stamp})
            batch.measurements += [
                {**n.to_dict(), **stamp, "slot": slot} for slot, n in enumerate(item.nozzles)
            ]
        return batch

    def statements(self) -> list[Statement]:
        return [
            (insert_sql("frames", FRAME_COLUMNS + ORIGIN_NAMES), self.frames),
            (insert_sql("measurements", STORED_MEASUREMENT_COLUMNS), self.measurements),
            (insert_sql("events", STORED_EVENT_COLUMNS), self.events),
        ]

    def to_json(self) -> str:
        return json.dumps([self.frames, self.measurements, self.events])

    @classmethod
    def from_json(cls, text: str) -> Batch:
        return cls(*json.loads(text))

    def extend(self, other: Batch) -> None:
        self.frames += other.frames
        self.measurements += other.measurements
        self.events += other.events

    @property
    def records(self) -> int:
        """Frames and events: what the spool depth counts."""
        return len(self.frames) + len(self.events)


def frame_row(f: FrameRecord) -> Params:
    return {
        "time": f.time, "source": f.source, "frame_no": f.frame_no, "width": f.width,
        "height": f.height, "n_nozzles": len(f.nozzles), "latency_s": f.latency_s,
    }  # fmt: skip


ORIGIN_NAMES = tuple(c.name for c in ORIGIN_COLUMNS)
STORED_MEASUREMENT_COLUMNS = tuple(c.name for c in table_layout("measurements"))
STORED_EVENT_COLUMNS = tuple(c.name for c in table_layout("events"))


def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """An insert that skips a row whose unique key is stored already (a retried batch)."""
    names = ", ".join(f'"{c}"' for c in columns)  # quoted: "index" is an SQL keyword
    values = ", ".join(f":{c}" for c in columns)
    return f"INSERT INTO {table} ({names}) VALUES ({values}) ON CONFLICT DO NOTHING"


def sql_columns(columns: tuple[Column, ...]) -> dict[str, str]:
    """{name: SQL type} of record columns, as a table holding them declares them."""
    return {c.name: SQL_TYPES[c.kind] for c in columns}


def table_columns(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    """{name: declared SQL type} of a SQLite table's columns, without its row id."""
    rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
    return {r["name"]: r["type"] for r in rows if r["name"] != "id"}


def prune(db: Database, cutoff: float) -> None:
    """Retention: delete every row older than `cutoff` (epoch seconds)."""
    for table in TABLES:
        db.execute(f"DELETE FROM {table} WHERE time < :cutoff", {"cutoff": cutoff})
