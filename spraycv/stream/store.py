"""Persistence: a batching writer thread and the queries, on SQLite (the embedded default)
or PostgreSQL (a fleet: spraycv/stream/database.py, docs/fleet.md); the schema they share is
spraycv/stream/schema.py, whose docstring says what is stored and how a batch sent twice
is stored once.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from spraycv.redact import redact_credentials
from spraycv.stream.database import (
    Database,
    DatabaseUnavailable,
    Params,
    StoreError,
    open_database,
)
from spraycv.stream.records import Event, FrameRecord
from spraycv.stream.schema import TABLES, Batch, Origin, open_sqlite, prune

log = logging.getLogger("spraycv.stream.store")

__all__ = ["DatabaseUnavailable", "StoreError"]


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
