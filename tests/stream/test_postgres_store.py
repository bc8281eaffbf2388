"""The store on a real PostgreSQL (started by the `postgres` fixture): the same schema and
migrations as SQLite, the same writer and reader, idempotent batches, roles enforced."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from test_store import frame

from spraycv.stream.database import PostgresDatabase, StoreError, translate_ddl
from spraycv.stream.schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Batch,
    Origin,
    prepare_schema,
    sql_columns,
    table_layout,
)
from spraycv.stream.spool import Forwarder, LinkState, Spool, SpoolSink
from spraycv.stream.store import RowFilter, StoreReader, StoreWriter


def fleet_writer(url: str, spool: Path, machine: str) -> StoreWriter:
    db = PostgresDatabase(url, pool_size=2, connect_timeout_s=2)
    queue = Spool(spool)
    sink = SpoolSink(queue, Forwarder(queue, db, retry_s=0.2), drain_on_stop_s=10)
    return StoreWriter(url, 0.05, origin=Origin("farm", machine), sink=sink, database=db)


def test_the_one_schema_migrates_on_postgresql(pg_url: str) -> None:
    assert "DOUBLE PRECISION" in translate_ddl(MIGRATIONS[0])
    db = PostgresDatabase(pg_url)
    prepare_schema(db)
    prepare_schema(db)  # a second start migrates nothing
    assert db.schema_version() == SCHEMA_VERSION
    for table in ("measurements", "events"):
        assert db.table_columns(table) == sql_columns(table_layout(table))
    db.close()


def test_writer_and_reader_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    prepare_schema(PostgresDatabase(pg_url))
    writer = fleet_writer(pg_url, tmp_path / "spool.sqlite", "sprayer-1")
    writer.start()
    for i in range(50):
        writer.put(frame(1000.0 + i, i))
    writer.close()
    store = StoreReader(pg_url)
    assert store.counts() == {"frames": 50, "measurements": 100, "events": 0}
    rows = store.measurements(1010.0, 1020.0, "cam")
    assert [r["frame_no"] for r in rows][::2] == list(range(10, 20))
    assert {(r["site"], r["machine"]) for r in rows} == {("farm", "sprayer-1")}
    narrowed = store.narrowed(RowFilter(machine="sprayer-1", nozzle=1))
    assert len(narrowed.measurements()) == 50
    assert store.narrowed(RowFilter(machine="other")).measurements() == []
    assert [o["machine"] for o in store.origins()] == ["sprayer-1"]
    assert len(store.nozzle_status(0.0)) == 2
    store.close()


def test_a_batch_sent_twice_is_stored_once(pg_url: str) -> None:
    db = PostgresDatabase(pg_url)
    prepare_schema(db)
    batch = Batch.of([frame(1.0, 1), frame(2.0, 2)], Origin("farm", "m1"))
    db.write(batch.statements())
    db.write(batch.statements())  # the reply was lost: the daemon sends it again
    other = Batch.of([frame(1.0, 1)], Origin("farm", "m2"))  # same frame, another machine
    db.write(other.statements())
    assert StoreReader(pg_url).counts() == {"frames": 3, "measurements": 6, "events": 0}
    db.close()


def test_roles_daemon_inserts_dashboard_only_reads(pg_url: str, postgres) -> None:
    from spraycv.stream.roles import grant_statements

    database = pg_url.split("/")[3].split("?")[0]
    db = PostgresDatabase(pg_url)
    prepare_schema(db)
    for role in ("spraycv_daemon", "spraycv_dashboard"):
        postgres.admin(f"DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object"
                       " THEN NULL; END $$")  # fmt: skip
    for statement in grant_statements("spraycv_daemon", "spraycv_dashboard"):
        db.execute(statement)
    db.close()
    daemon_url = postgres.url(database, "spraycv_daemon")
    daemon = PostgresDatabase(daemon_url)
    prepare_schema(daemon, migrate=False)  # may read the version and check the columns
    daemon.write(Batch.of([frame(1.0, 1)], Origin("farm", "m1")).statements())
    with pytest.raises(StoreError, match="permission denied"):
        daemon.rows("SELECT * FROM measurements")
    with pytest.raises(StoreError, match="permission denied"):
        daemon.execute("DELETE FROM frames")
    daemon.close()
    dashboard_url = postgres.url(database, "spraycv_dashboard")
    assert StoreReader(dashboard_url).counts()["frames"] == 1
    with (
        psycopg.connect(dashboard_url) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("INSERT INTO frames (time, source, frame_no, n_nozzles) VALUES (1, 'c', 1, 0)")
    dashboard = PostgresDatabase(dashboard_url)
    with pytest.raises(StoreError, match="permission denied"):
        dashboard.write(Batch.of([frame(2.0, 2)], Origin("farm", "m1")).statements())
    dashboard.close()


def test_the_spool_keeps_batches_while_the_server_is_unreachable(tmp_path: Path) -> None:
    dead = f"postgresql://nobody@/none?host={tmp_path}&port=1"  # no server behind that socket
    writer = fleet_writer(dead, tmp_path / "spool.sqlite", "m1")
    writer.start()
    for i in range(5):
        writer.put(frame(float(i), i))
    writer.close(timeout=1.0)
    assert writer.status() == {"link": LinkState.DOWN.value, "spool_depth": 5,
                               "last_error": writer.status()["last_error"]}  # fmt: skip
    assert Spool(tmp_path / "spool.sqlite").depth() == 5  # on disk for the next start
