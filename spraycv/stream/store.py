"""Persistence: a versioned schema, a batching writer thread, and queries, on SQLite (the
embedded default) or PostgreSQL (a fleet: spraycv/stream/database.py, docs/fleet.md).

Every inferred frame goes into `frames` (even with no spray) and each nozzle into
`measurements`, so "nothing lost" is checkable: rows == frames the daemon inferred. Every
row carries its `site` and `machine`; a frame is keyed by (machine, source, frame_no, time)
and its nozzles by their slot in it, and every insert skips a row whose key is stored
already, so a batch sent twice (a retry after a lost reply) is stored once.
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from spraycv.geometry.types import Column
from spraycv.redact import redact_credentials
from spraycv.stream.database import (
    Database,
    DatabaseUnavailable,
    Params,
    SqliteDatabase,
    Statement,
    StoreError,
    open_database,
)
from spraycv.stream.records import EVENT_COLUMNS, Event, FrameRecord, nozzle_columns

log = logging.getLogger("spraycv.stream.store")

__all__ = ["DatabaseUnavailable", "StoreError"]

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
                " migration to spraycv/stream/store.py"
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


# -- writing -------------------------------------------------------------------------------
class Sink(Protocol):
    """Where the writer hands a batch: the database itself, or a spool that forwards it."""

    def start(self) -> None: ...
    def deliver(self, batch: Batch) -> None: ...
    def status(self) -> dict[str, Any]: ...
    def close(self, timeout: float) -> None: ...


class DirectSink:
    """Writes each batch to the database in one transaction (a local SQLite file)."""

    def __init__(self, db: Database):
        self.db = db

    def start(self) -> None:
        pass

    def deliver(self, batch: Batch) -> None:
        self.db.write(batch.statements())

    def status(self) -> dict[str, Any]:
        return {"link": "local", "spool_depth": 0, "last_error": None}

    def close(self, timeout: float) -> None:
        self.db.close()


class StoreWriter(threading.Thread):
    """Writes frames and events in batched transactions from one thread.

    `put()` never blocks the inference worker; `close()` drains the queue and commits, so
    everything handed over before a stop is on disk (in the database, or in the spool that
    forwards to a server: spraycv/stream/spool.py).
    """

    def __init__(
        self,
        location: Path | str,
        flush_every_s: float = 0.5,
        retention_days: float | None = None,
        retention_every_s: float = 3600.0,
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        *,
        origin: Origin | None = None,
        sink: Sink | None = None,
        database: Database | None = None,
    ):
        super().__init__(name="store-writer", daemon=True)
        self.location = redact_credentials(str(location))
        self.flush_every_s = flush_every_s
        self.retention_days = retention_days
        self.retention_every_s = retention_every_s
        # injected so that tests (and a device booted a minute ago) do not depend on uptime
        self._wall_clock = wall_clock
        self._monotonic = monotonic
        self.origin = origin or Origin()
        # errors surface at start-up, in the caller
        self.database = database or open_sqlite(Path(location))
        self.sink = sink or DirectSink(self.database)
        self._queue: queue.Queue[FrameRecord | Event | None] = queue.Queue()
        self.frames_written = 0
        self.measurements_written = 0
        self.events_written = 0
        self.errors = 0
        self._last_retention: float | None = None  # None: due at the first pass

    def start(self) -> None:
        self.sink.start()
        super().start()

    def status(self) -> dict[str, Any]:
        """The link to the database and the spool's depth (what /health shows)."""
        return self.sink.status()

    def put(self, item: FrameRecord | Event) -> None:
        self._queue.put(item)

    def close(self, timeout: float = 10.0) -> None:
        if self.ident is not None:  # never started: nothing queued was ever written
            self._queue.put(None)
            self.join(timeout)
        self.sink.close(timeout)

    def run(self) -> None:
        done = False
        while not done:
            batch, done = self._collect()
            if batch:
                self._write(batch)
            self._apply_retention()

    def _collect(self) -> tuple[list[FrameRecord | Event], bool]:
        """What arrived within flush_every_s (at most 1000 records); True at the stop mark."""
        batch: list[FrameRecord | Event] = []
        deadline = time.monotonic() + self.flush_every_s
        while len(batch) < 1000:
            try:
                item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if item is None:
                return batch, True
            batch.append(item)
        return batch, False

    def _write(self, items: list[FrameRecord | Event]) -> None:
        batch = Batch.of(items, self.origin)
        for attempt in range(3):  # a locked database (a reader holding it) is worth a retry
            try:
                self.sink.deliver(batch)
                break
            except (sqlite3.Error, StoreError) as exc:
                self.errors += 1
                log.error("database write failed", extra={"error": str(exc), "try": attempt})
                time.sleep(0.2 * (attempt + 1))
        else:
            return
        self.frames_written += len(batch.frames)
        self.measurements_written += len(batch.measurements)
        self.events_written += len(batch.events)

    def _apply_retention(self) -> None:
        if self.retention_days is None:
            return
        now = self._monotonic()
        if self._last_retention is not None and now - self._last_retention < self.retention_every_s:
            return
        self._last_retention = now
        try:
            prune(self.database, self._wall_clock() - self.retention_days * 86400)
        except StoreError as exc:  # a server down, or a role that may not delete (docs/fleet.md)
            log.warning("retention not applied", extra={"error": str(exc)})


# -- reading -------------------------------------------------------------------------------
@dataclass(frozen=True)
class RowFilter:
    """History's filters beyond time and source (None: any)."""

    site: str | None = None
    machine: str | None = None
    nozzle: int | None = None


# CAST: PostgreSQL must know a parameter's type even where it is only compared with NULL
ROW_FILTER_SQL = (
    " AND (CAST(:source AS TEXT) IS NULL OR source = :source)"
    " AND (CAST(:site AS TEXT) IS NULL OR site = :site)"
    " AND (CAST(:machine AS TEXT) IS NULL OR machine = :machine)"
)
NOZZLE_FILTER_SQL = " AND (CAST(:nozzle AS INTEGER) IS NULL OR nozzle_id = :nozzle)"
FAR_FUTURE = 1e18  # "no end" of a range, a number both engines bind as a plain float


class StoreReader:
    """Read-only queries for the API and the dashboard, on a SQLite file or a server.

    query_timeout_s: a query running longer fails with a StoreError (the API's request
    timeout); None: no limit. On a server the reader holds a pool of at most pool_size
    connections: keep one reader per process (close() ends it).
    """

    def __init__(
        self, location: Path | str, query_timeout_s: float | None = None, pool_size: int = 4,
        where: RowFilter | None = None, database: Database | None = None,
    ):  # fmt: skip
        self.location = location
        self.query_timeout_s = query_timeout_s
        self.where = where or RowFilter()
        self._db = database or open_database(
            location, readonly=True, pool_size=pool_size, query_timeout_s=query_timeout_s
        )

    @property
    def path(self) -> Path:
        return Path(self.location)

    def narrowed(self, where: RowFilter) -> StoreReader:
        """The same store read through History's filters (sharing its connections)."""
        return StoreReader(self.location, self.query_timeout_s, where=where, database=self._db)

    def close(self) -> None:
        self._db.close()

    def _rows(self, sql: str, params: Params | None = None) -> list[dict[str, Any]]:
        return self._db.rows(sql, params)

    def _since(
        self, table: str, since: float, until: float | None, source: str | None, limit: int
    ) -> list[dict[str, Any]]:
        """Rows of `table` with since <= time < until (and that source), oldest first."""
        nozzle_sql = NOZZLE_FILTER_SQL if table != "frames" else ""
        return self._rows(
            f"SELECT * FROM {table} WHERE time >= :since AND time < :until{ROW_FILTER_SQL}"
            f"{nozzle_sql} ORDER BY time, id LIMIT :limit",
            {"since": since, "until": until if until is not None else FAR_FUTURE,
             "source": source, "limit": limit, **vars(self.where)},
        )  # fmt: skip

    def frames(
        self, since: float = 0.0, until: float | None = None, source: str | None = None,
        limit: int = 1_000_000,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Inferred frames (size, nozzle count, capture-to-measurement latency)."""
        return self._since("frames", since, until, source, limit)

    def measurements(
        self, since: float = 0.0, until: float | None = None, source: str | None = None,
        limit: int = 10_000,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Nozzle measurements."""
        return self._since("measurements", since, until, source, limit)

    def events(
        self, since: float = 0.0, until: float | None = None, source: str | None = None,
        limit: int = 10_000,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """Events; a URL password in a message (a row of an older spraycv) is not shown."""
        rows = self._since("events", since, until, source, limit)
        return [{**r, "message": redact_credentials(r["message"])} for r in rows]

    def sources(self) -> list[str]:
        return [r["source"] for r in self._rows("SELECT DISTINCT source FROM frames")]

    def counts(self) -> dict[str, int]:
        """Rows per table."""
        return {t: self._rows(f"SELECT COUNT(*) AS n FROM {t}")[0]["n"] for t in TABLES}

    def frame_measurements(self, source: str, frame_no: int) -> list[dict[str, Any]]:
        """The nozzle rows of one frame (the latest run's, if frame numbers repeat)."""
        return self._rows(
            "SELECT * FROM measurements WHERE source = :source AND frame_no = :frame_no"
            " AND time = (SELECT MAX(time) FROM measurements"
            " WHERE source = :source AND frame_no = :frame_no) ORDER BY nozzle_id",
            {"source": source, "frame_no": frame_no},
        )

    # -- the fleet -------------------------------------------------------------------------
    def origins(self) -> list[dict[str, Any]]:
        """Every (site, machine, source) with its last contact (newest frame time)."""
        return self._rows(
            "SELECT site, machine, source, MAX(time) AS last_time FROM frames"
            " GROUP BY site, machine, source ORDER BY site, machine, source"
        )

    def nozzle_status(self, since: float) -> list[dict[str, Any]]:
        """The newest reading of every placed nozzle of the fleet measured since `since`."""
        return self._rows(
            "SELECT m.site, m.machine, m.source, m.nozzle_id, m.time, m.smoothed_angle_deg,"
            " m.included_angle_deg, m.spec_status FROM measurements m JOIN"
            " (SELECT machine, source, nozzle_id, MAX(time) AS newest FROM measurements"
            "  WHERE time >= :since AND nozzle_id IS NOT NULL GROUP BY machine, source, nozzle_id)"
            " latest ON m.machine = latest.machine AND m.source = latest.source"
            " AND m.nozzle_id = latest.nozzle_id AND m.time = latest.newest"
            " ORDER BY m.site, m.machine, m.source, m.nozzle_id",
            {"since": since},
        )
