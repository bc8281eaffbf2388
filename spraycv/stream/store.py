"""SQLite persistence (WAL): a versioned schema, a batching writer thread, and queries.

Every inferred frame goes into `frames` (even with no spray) and each nozzle into
`measurements`, so "nothing lost" is checkable: rows == frames the daemon inferred.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from spraycv.geometry.types import Column
from spraycv.redact import redact_credentials
from spraycv.stream.records import EVENT_COLUMNS, Event, FrameRecord, nozzle_columns

log = logging.getLogger("spraycv.stream.store")

# Migration i brings the schema from version i to i + 1; never edit one that has shipped.
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
)
SCHEMA_VERSION = len(MIGRATIONS)

SQL_TYPES: dict[type, str] = {float: "REAL", int: "INTEGER", str: "TEXT"}  # by Column.kind
MEASUREMENT_COLUMNS = tuple(c.name for c in nozzle_columns())


class StoreError(RuntimeError):
    """The database cannot be opened, migrated or written; the message says which file."""


def connect(path: Path, readonly: bool = False, timeout_s: float = 10.0) -> sqlite3.Connection:
    """A connection with WAL and a busy timeout (readers and the writer never block long).

    readonly: SQLite's read-only mode, so a reader can never take the write lock; with WAL
    it reads a snapshot while the writer goes on.
    """
    try:
        if readonly:
            uri = f"{Path(path).absolute().as_uri()}?mode=ro"  # as_uri escapes "?" and "#"
            conn = sqlite3.connect(uri, uri=True, timeout=timeout_s)
        else:
            conn = sqlite3.connect(path, timeout=10, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at checkpoint
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the database: {exc}") from None
    conn.row_factory = sqlite3.Row
    return conn


def migrate(conn: sqlite3.Connection, path: Path) -> int:
    """Bring the schema up to SCHEMA_VERSION; returns the version found before."""
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: schema version {found} is newer than this spraycv ({SCHEMA_VERSION}); "
            "upgrade spraycv or use another database file"
        )
    for version in range(found, SCHEMA_VERSION):
        with conn:  # one transaction per step: a failed step leaves the previous version
            conn.executescript(f"BEGIN;{MIGRATIONS[version]}PRAGMA user_version={version + 1};")
        log.info("database migrated", extra={"path": str(path), "version": version + 1})
    return found


def check_columns(conn: sqlite3.Connection, path: Path) -> None:
    """StoreError naming any record column the tables lack: a migration is missing, and
    every write would fail (the check runs at start-up instead)."""
    for table, columns in (("measurements", nozzle_columns()), ("events", EVENT_COLUMNS)):
        missing = sql_columns(columns).items() - table_columns(conn, table).items()
        if missing:
            raise StoreError(
                f"{path}: table {table} lacks the columns {sorted(missing)}: add a migration"
                " to spraycv/stream/store.py"
            )


def open_store(path: Path) -> sqlite3.Connection:
    """Create the folder and file if needed, check it is writable, migrate."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{path}: cannot create the database folder: {exc}") from None
    conn = connect(path)
    try:
        migrate(conn, path)
        check_columns(conn, path)
        with conn:  # a read-only file or folder only fails at the first write: try one now
            conn.execute("CREATE TABLE IF NOT EXISTS _write_check (x)")
            conn.execute("DROP TABLE _write_check")
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"{path}: the database is not writable: {exc}") from None
    except StoreError:
        conn.close()
        raise
    return conn


class StoreWriter(threading.Thread):
    """Writes frames and events in batched transactions from one thread.

    `put()` never blocks the inference worker; `close()` drains the queue and commits, so
    everything handed over before a stop is on disk.
    """

    def __init__(
        self,
        path: Path,
        flush_every_s: float = 0.5,
        retention_days: float | None = None,
        retention_every_s: float = 3600.0,
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ):
        super().__init__(name="store-writer", daemon=True)
        self.path = Path(path)
        self.flush_every_s = flush_every_s
        self.retention_days = retention_days
        self.retention_every_s = retention_every_s
        # injected so that tests (and a device booted a minute ago) do not depend on uptime
        self._wall_clock = wall_clock
        self._monotonic = monotonic
        self._conn = open_store(self.path)  # errors surface at start-up, in the caller
        self._queue: queue.Queue[FrameRecord | Event | None] = queue.Queue()
        self.frames_written = 0
        self.measurements_written = 0
        self.events_written = 0
        self.errors = 0
        self._last_retention: float | None = None  # None: due at the first pass

    def put(self, item: FrameRecord | Event) -> None:
        self._queue.put(item)

    def close(self, timeout: float = 10.0) -> None:
        if self.ident is None:  # never started: nothing queued was ever written
            self._conn.close()
            return
        self._queue.put(None)
        self.join(timeout)

    def run(self) -> None:
        done = False
        while not done:
            batch: list[FrameRecord | Event] = []
            deadline = time.monotonic() + self.flush_every_s
            while True:
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    done = True
                    break
                batch.append(item)
                if len(batch) >= 1000:
                    break
            if batch:
                self._write(batch)
            self._apply_retention()
        self._conn.close()

    def _write(self, batch: list[FrameRecord | Event]) -> None:
        frames = [b for b in batch if isinstance(b, FrameRecord)]
        events = [b for b in batch if isinstance(b, Event)]
        rows = [n.to_dict() for f in frames for n in f.nozzles]
        for attempt in range(3):  # a locked database (a reader holding it) is worth a retry
            try:
                with self._conn:
                    self._conn.executemany(
                        "INSERT INTO frames (time, source, frame_no, width, height, n_nozzles,"
                        " latency_s) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [
                            (f.time, f.source, f.frame_no, f.width, f.height, len(f.nozzles),
                             f.latency_s)
                            for f in frames
                        ],
                    )  # fmt: skip
                    self._conn.executemany(insert_sql("measurements", MEASUREMENT_COLUMNS), rows)
                    self._conn.executemany(
                        insert_sql("events", tuple(c.name for c in EVENT_COLUMNS)),
                        [e.to_dict() for e in events],
                    )
                break
            except sqlite3.Error as exc:
                self.errors += 1
                log.error("database write failed", extra={"error": str(exc), "try": attempt})
                time.sleep(0.2 * (attempt + 1))
        else:
            return
        self.frames_written += len(frames)
        self.measurements_written += len(rows)
        self.events_written += len(events)

    def _apply_retention(self) -> None:
        if self.retention_days is None:
            return
        now = self._monotonic()
        if self._last_retention is not None and now - self._last_retention < self.retention_every_s:
            return
        self._last_retention = now
        cutoff = self._wall_clock() - self.retention_days * 86400
        with self._conn:
            for table in ("frames", "measurements", "events"):
                self._conn.execute(f"DELETE FROM {table} WHERE time < ?", (cutoff,))


def insert_sql(table: str, columns: tuple[str, ...]) -> str:
    names = ", ".join(f'"{c}"' for c in columns)  # quoted: "index" is an SQL keyword
    values = ", ".join(f":{c}" for c in columns)
    return f"INSERT INTO {table} ({names}) VALUES ({values})"


def sql_columns(columns: tuple[Column, ...]) -> dict[str, str]:
    """{name: SQL type} of record columns, as a table holding them declares them."""
    return {c.name: SQL_TYPES[c.kind] for c in columns}


def table_columns(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    """{name: declared SQL type} of a table's columns, without its row id."""
    rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
    return {r["name"]: r["type"] for r in rows if r["name"] != "id"}


class StoreReader:
    """Read-only queries for the API and the dashboard (their own connection per call).

    query_timeout_s: a query running longer is interrupted with a StoreError (the API's
    request timeout); None: no limit.
    """

    def __init__(self, path: Path, query_timeout_s: float | None = None):
        self.path = Path(path)
        self.query_timeout_s = query_timeout_s

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        if not self.path.is_file():
            raise StoreError(f"{self.path}: no such database")
        conn = connect(self.path, readonly=True, timeout_s=self.query_timeout_s or 10.0)
        if self.query_timeout_s is not None:
            deadline = time.monotonic() + self.query_timeout_s
            # called every 10k virtual-machine steps; a non-zero return interrupts the query
            conn.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
        try:
            yield conn
        except sqlite3.OperationalError as exc:
            if "interrupted" not in str(exc):
                raise
            raise StoreError(f"query took longer than {self.query_timeout_s:g} s") from None
        finally:
            conn.close()

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
        with self._conn() as conn:
            return [dict(r) for r in conn.execute(sql, args)]

    def _since(
        self, table: str, since: float, until: float | None, source: str | None, limit: int
    ) -> list[dict[str, Any]]:
        """Rows of `table` with since <= time < until (and that source), oldest first."""
        return self._rows(
            f"SELECT * FROM {table} WHERE time >= ? AND time < ?"
            " AND (? IS NULL OR source = ?) ORDER BY time, id LIMIT ?",
            (since, until if until is not None else float("inf"), source, source, limit),
        )

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
        return [r["source"] for r in self._rows("SELECT DISTINCT source FROM frames", ())]

    def counts(self) -> dict[str, int]:
        """Rows per table."""
        with self._conn() as conn:
            return {
                t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("frames", "measurements", "events")
            }

    def frame_measurements(self, source: str, frame_no: int) -> list[dict[str, Any]]:
        """The nozzle rows of one frame (the latest run's, if frame numbers repeat)."""
        return self._rows(
            "SELECT * FROM measurements WHERE source = ? AND frame_no = ?"
            " AND time = (SELECT MAX(time) FROM measurements WHERE source = ? AND frame_no = ?)"
            " ORDER BY nozzle_id",
            (source, frame_no, source, frame_no),
        )
