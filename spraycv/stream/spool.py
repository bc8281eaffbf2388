"""Store and forward: a daemon writing to a remote server measures into a local SQLite spool,
and a forwarder thread moves the spool to the server in order, whenever the link is up.

Every batch goes through the spool, up or down: one path, no switch-over to get wrong. A
spooled batch is removed only after the server committed it; a batch sent again after a
crash in between is skipped by the server's unique keys (store.insert_sql), so each row is
stored exactly once. A daemon stopped while the server is down leaves its spool on disk, and
forwards it first at its next start.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spraycv.config.daemon import StoreConfig
from spraycv.geometry.types import ValueEnum
from spraycv.stream.database import (
    Database,
    DatabaseUnavailable,
    PostgresDatabase,
    StoreError,
    connect_sqlite,
)
from spraycv.stream.schema import Batch, Origin, prepare_schema
from spraycv.stream.store import StoreWriter

log = logging.getLogger("spraycv.stream.spool")

SPOOL_DDL = (
    "CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT,"  # never reused
    " records INTEGER NOT NULL, batch TEXT NOT NULL)"
)


class LinkState(ValueEnum):
    """The forwarder's view of the server (/health and /metrics show it)."""

    CONNECTING = "connecting"  # no answer yet since the start
    UP = "up"
    DOWN = "down"


class Spool:
    """A durable FIFO of batches in a local SQLite file (written by the writer thread, read
    and emptied by the forwarder)."""

    def __init__(self, path: Path):
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create the spool folder: {exc}") from None
        self.path = path
        self._conn = connect_sqlite(path)
        self._conn.execute("PRAGMA synchronous=FULL")  # the only copy while the link is down
        self._conn.execute(SPOOL_DDL)
        self._lock = threading.Lock()  # one connection, two threads
        self._left: int | None = None  # the depth at close (the file stays for the next start)

    def append(self, batch: Batch) -> None:
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO outbox (records, batch) VALUES (?, ?)",
                (batch.records, batch.to_json()),
            )

    def head(self, max_records: int) -> tuple[int, Batch] | None:
        """(last id, the oldest batches merged, up to about max_records), None when empty."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, records, batch FROM outbox ORDER BY id LIMIT 1000"
            ).fetchall()
        if not rows:
            return None
        merged, last, taken = Batch(), 0, 0
        for row in rows:
            if taken and taken + row["records"] > max_records:
                break
            merged.extend(Batch.from_json(row["batch"]))
            last, taken = row["id"], taken + row["records"]
        return last, merged

    def remove_through(self, last_id: int) -> None:
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM outbox WHERE id <= ?", (last_id,))

    def depth(self) -> int:
        """Frames and events waiting to be forwarded."""
        with self._lock:
            if self._left is not None:
                return self._left
            return self._conn.execute("SELECT COALESCE(SUM(records), 0) FROM outbox").fetchone()[0]

    def close(self) -> None:
        left = self.depth()
        with self._lock:
            self._left = left
            self._conn.close()


@dataclass
class ForwardCounts:
    frames: int = 0
    measurements: int = 0
    events: int = 0

    def add(self, batch: Batch) -> None:
        self.frames += len(batch.frames)
        self.measurements += len(batch.measurements)
        self.events += len(batch.events)


class Forwarder(threading.Thread):
    """Moves the spool to the server, oldest first, in transactions of up to max_records.

    migrate: whether this role may migrate the schema (else it only checks the version).
    """

    def __init__(
        self, spool: Spool, db: Database, retry_s: float = 1.0, max_records: int = 2000,
        migrate: bool = True,
    ):  # fmt: skip
        super().__init__(name="spool-forwarder", daemon=True)
        self.spool, self.db = spool, db
        self.retry_s, self.max_records, self.may_migrate = retry_s, max_records, migrate
        self.link = LinkState.CONNECTING
        self.last_error: str | None = None
        self.forwarded = ForwardCounts()
        self._schema_checked = False
        self._wake = threading.Event()
        self._stop_by: float | None = None  # monotonic deadline of the last drain

    def notify(self) -> None:
        """A batch was spooled: forward it now rather than at the next poll."""
        self._wake.set()

    def stop(self, drain_s: float) -> None:
        """Forward what the link allows within drain_s, then stop (the rest stays spooled)."""
        self._stop_by = time.monotonic() + drain_s
        self._wake.set()
        if self.ident is not None:
            self.join(drain_s + 30)  # a transaction in flight finishes

    def status(self) -> dict[str, Any]:
        return {"link": str(self.link), "spool_depth": self.spool.depth(),
                "last_error": self.last_error}  # fmt: skip

    def run(self) -> None:
        while not self._should_exit():
            if self._forward_once():
                continue  # more may be waiting
            self._wake.wait(self.retry_s if self.link is LinkState.DOWN else 1.0)
            self._wake.clear()

    def _should_exit(self) -> bool:
        if self._stop_by is None:
            return False
        return time.monotonic() > self._stop_by or self.spool.depth() == 0

    def _forward_once(self) -> bool:
        """One transaction of the oldest spooled batches; True if it moved some."""
        try:
            if not self._schema_checked:
                prepare_schema(self.db, self.may_migrate)
                self._schema_checked = True
            head = self.spool.head(self.max_records)
            if head is None:
                self._set_link(LinkState.UP, None)
                return False
            last_id, batch = head
            self.db.write(batch.statements())
        except StoreError as exc:  # DatabaseUnavailable, or the schema, or a permission
            self._set_link(LinkState.DOWN, str(exc))
            if not isinstance(exc, DatabaseUnavailable):
                log.error("cannot forward the spool", extra={"error": str(exc)})
            return False
        self.spool.remove_through(last_id)
        self.forwarded.add(batch)
        self._set_link(LinkState.UP, None)
        return True

    def _set_link(self, state: LinkState, error: str | None) -> None:
        if state is not self.link:
            level = logging.WARNING if state is LinkState.DOWN else logging.INFO
            shown = {"db": self.db.label, "error": error, "spool_depth": self.spool.depth()}
            log.log(level, f"database link {state}", extra=shown)
        self.link, self.last_error = state, error


class SpoolSink:
    """The writer's sink for a server: spool every batch, let the forwarder move it."""

    def __init__(self, spool: Spool, forwarder: Forwarder, drain_on_stop_s: float):
        self.spool, self.forwarder, self.drain_on_stop_s = spool, forwarder, drain_on_stop_s

    def deliver(self, batch: Batch) -> None:
        self.spool.append(batch)
        self.forwarder.notify()

    def start(self) -> None:
        self.forwarder.start()

    def status(self) -> dict[str, Any]:
        return self.forwarder.status()

    def close(self, timeout: float) -> None:
        self.forwarder.stop(min(timeout, self.drain_on_stop_s))
        self.spool.close()
        self.forwarder.db.close()


def open_fleet_writer(store: StoreConfig, flush_every_s: float | None = None) -> StoreWriter:
    """The daemon's writer for a server: spool, forwarder, and a bounded pool. The server
    may be down at start: the daemon measures into the spool meanwhile."""
    url = store.url or ""
    db = PostgresDatabase(url, store.pool_size, connect_timeout_s=store.connect_timeout_s)
    spool = Spool(store.spool_path)
    forwarder = Forwarder(spool, db, store.retry_s, migrate=store.migrate)
    return StoreWriter(
        url, flush_every_s or store.flush_every_s, store.retention_days,
        origin=Origin(store.site, store.machine), database=db,
        sink=SpoolSink(spool, forwarder, store.drain_on_stop_s),
    )  # fmt: skip
