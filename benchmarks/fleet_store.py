"""Sustained insert rate, SQLite file against PostgreSQL, side by side in one run, and the
spool's forward rate after an outage (docs/benchmarks.md, "Fleet store").

Starts its own PostgreSQL (initdb + pg_ctl on a unix socket, as the tests do). Rates are
nozzle measurement rows per second, written the way the daemon writes them: batches of
`--batch` frames (the writer's 0.5 s flush), each in one transaction.

    python benchmarks/fleet_store.py --frames 20000 --nozzles 4 --batch 200
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from postgres_server import PostgresServer, postgres_bindir

from spraycv.geometry import ConeMeasurement
from spraycv.stream.database import Database, PostgresDatabase
from spraycv.stream.records import FrameRecord, NozzleRecord, SpecStatus
from spraycv.stream.schema import Batch, Origin, open_sqlite, prepare_schema
from spraycv.stream.spool import Forwarder, Spool


def frames(n: int, nozzles: int, start: float) -> list[FrameRecord]:
    m = ConeMeasurement(index=0, apex=(100.0, 50.0), included_angle_deg=110.0, length_px=200.0)
    return [
        FrameRecord(start + i * 0.1, "cam0", i, 640, 480, 0.05, [
            NozzleRecord.from_measurement(
                m, time=start + i * 0.1, source="cam0", frame_no=i, nozzle_id=k,
                smoothed=110.0, spec_status=SpecStatus.OK, model="m", backend="onnx",
            ) for k in range(nozzles)
        ]) for i in range(n)
    ]  # fmt: skip


def batches(records: list[FrameRecord], size: int, machine: str) -> list[Batch]:
    origin = Origin("bench", machine)
    return [Batch.of(records[i : i + size], origin) for i in range(0, len(records), size)]


def insert_rate(db: Database, work: list[Batch]) -> float:
    """Measurement rows per second over every batch, one transaction each."""
    started = time.perf_counter()
    for batch in work:
        db.write(batch.statements())
    return sum(len(b.measurements) for b in work) / (time.perf_counter() - started)


def forward_rate(db: Database, spool_path: Path, work: list[Batch]) -> float:
    """Fill a spool as an outage does, then time the forwarder emptying it."""
    spool = Spool(spool_path)
    for batch in work:
        spool.append(batch)
    forwarder = Forwarder(spool, db, retry_s=0.1)
    started = time.perf_counter()
    forwarder.start()
    while spool.depth():
        time.sleep(0.01)
    elapsed = time.perf_counter() - started
    forwarder.stop(0.0)
    return forwarder.forwarded.measurements / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--nozzles", type=int, default=4)
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()
    bindir = postgres_bindir()
    if bindir is None:
        sys.exit("PostgreSQL binaries not found: apt-get install postgresql")
    records = frames(args.frames, args.nozzles, time.time())
    server = PostgresServer(bindir)
    try:
        server.start(fsync=True)  # durable commits, as in production
        work = Path(tempfile.mkdtemp(prefix="spraycv-bench-"))
        sqlite = open_sqlite(work / "bench.sqlite")
        pg = PostgresDatabase(server.url(server.new_database()))
        prepare_schema(pg)
        rates = {
            "SQLite file (WAL)": insert_rate(sqlite, batches(records, args.batch, "m1")),
            "PostgreSQL (unix socket)": insert_rate(pg, batches(records, args.batch, "m1")),
            "spool -> PostgreSQL (forward)": forward_rate(
                pg, work / "spool.sqlite", batches(records, args.batch, "m2")
            ),
        }
        print(f"{args.frames} frames x {args.nozzles} nozzles, batches of {args.batch} frames")
        print("| store | measurements/s |\n|---|---|")
        for name, rate in rates.items():
            print(f"| {name} | {rate:,.0f} |")
    finally:
        server.remove()


if __name__ == "__main__":
    main()
