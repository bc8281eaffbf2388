"""The daemon's HTTP API under load while it measures (issue 12): idle sockets + bursts.

Runs `spraycv daemon` as its own process on the bundled sample video (with a database
seeded so that /measurements?limit=1000 returns 1000 rows), opens `--idle` connections
that never complete a request from `--idle-clients` loopback addresses, then sends
`--rounds` bursts of `--requests` concurrent GET /measurements?limit=1000 from
`--request-clients` addresses, each with a `--deadline-s` deadline. Prints the answered and
refused counts, request times, idle sockets held, the daemon's thread count and measuring
rate before and during the load, and whether stored frames equal inferred frames after
SIGTERM. Bounded: it stops by itself.

Usage: python benchmarks/api_load.py [--idle 500] [--requests 200] [--rounds 5]
       [--daemon-src DIR]   (the daemon from another checkout, for a side-by-side)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

from spraycv.paths import SAMPLES_DIR
from spraycv.stream.loadgen import (
    Outcome,
    ThreadPeak,
    burst,
    idle_connections,
    seed_measurements,
    still_open,
    thread_count,
)
from spraycv.stream.store import StoreReader

# The ffmpeg test camera (and its free-port helper) live with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from ffmpeg_camera import free_port


def inferred(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        lines = response.read().decode().splitlines()
    return sum(float(x.rsplit(" ", 1)[1]) for x in lines if x.startswith("spraycv_frames_inf"))


def start(work: Path, max_fps: float, src: Path | None) -> tuple[subprocess.Popen, int]:
    port = free_port()
    config = {
        "sources": [{"name": "cam", "url": str(SAMPLES_DIR / "video.mp4"), "max_fps": max_fps}],
        "inference": {"threads": 1},
        "store": {"path": str(work / "db.sqlite")},
        "api": {"port": port},
        "alarms": {"snapshot_dir": None},
        "log_level": "WARNING",
    }
    (work / "daemon.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": str(src)} if src else None  # -m also looks in cwd
    daemon = subprocess.Popen(
        [sys.executable, "-m", "spraycv", "daemon", "--config", str(work / "daemon.yaml")],
        stdout=subprocess.PIPE, stderr=(work / "daemon.log").open("w"), text=True, env=env,
        cwd=src,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and daemon.poll() is None:
        try:
            if inferred(port) > 0:
                return daemon, port
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit(f"daemon did not start: {(work / 'daemon.log').read_text()[-2000:]}")


def rate(port: int, seconds: float) -> float:
    """Frames inferred per second over the next `seconds`."""
    first, started = inferred(port), time.monotonic()
    time.sleep(seconds)
    return (inferred(port) - first) / (time.monotonic() - started)


def report(outcomes: list[Outcome], deadline_s: float) -> None:
    seconds = sorted(o.seconds for o in outcomes)
    answered = sum(o.answered for o in outcomes)
    refused = sum(o.refused for o in outcomes)
    late = sum(s > deadline_s for s in seconds)
    p95 = seconds[int(0.95 * (len(seconds) - 1))]
    print(f"requests {len(outcomes)}: answered {answered}, refused {refused}, other "
          f"{len(outcomes) - answered - refused}, over {deadline_s:g} s: {late}")  # fmt: skip
    print(f"  time: median {statistics.median(seconds):.2f} s, p95 {p95:.2f} s, "
          f"max {seconds[-1]:.2f} s")  # fmt: skip
    answered_s = sorted(o.seconds for o in outcomes if o.answered)
    if answered_s:
        median = statistics.median(answered_s)
        print(f"  answered: median {median:.2f} s, max {answered_s[-1]:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--idle-clients", type=int, default=10)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--request-clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--deadline-s", type=float, default=5.0)
    parser.add_argument("--max-fps", type=float, default=10.0)
    parser.add_argument("--daemon-src", type=Path, default=None)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="spraycv-api-load-"))
    seed_measurements(work / "db.sqlite", frames=5000)
    daemon, port = start(work, args.max_fps, args.daemon_src)
    before = thread_count(daemon.pid)
    idle_rate = rate(port, 10)
    outcomes: list[Outcome] = []
    with (
        ThreadPeak(daemon.pid) as threads,
        idle_connections("127.0.0.1", port, args.idle, args.idle_clients) as idle,
    ):
        time.sleep(1)  # the per-client refusals go out
        held = sum(map(still_open, idle))
        first, started = inferred(port), time.monotonic()
        for _ in range(args.rounds):
            outcomes += burst(
                "127.0.0.1", port, "/measurements?limit=1000", args.requests,
                args.request_clients, timeout=args.deadline_s + 5,
            )  # fmt: skip
        load_rate = (inferred(port) - first) / (time.monotonic() - started)
    daemon.send_signal(signal.SIGTERM)
    out, _ = daemon.communicate(timeout=60)
    summary = json.loads(out.strip().splitlines()[-1])["stopped"]
    stored = len(StoreReader(work / "db.sqlite").frames(source="cam"))

    print(f"{args.idle} idle sockets from {args.idle_clients} clients: {held} held, "
          f"{args.idle - held} refused (per-client limit)")  # fmt: skip
    print(f"{args.rounds} bursts of {args.requests} concurrent GET /measurements?limit=1000 "
          f"from {args.request_clients} clients")  # fmt: skip
    report(outcomes, args.deadline_s)
    print(
        f"daemon threads: {before} before, median {threads.median} and peak {threads.peak}"
        " under load"
    )
    print(f"measuring: {idle_rate:.2f} frames/s before, {load_rate:.2f} frames/s under load")
    ok = stored == summary["frames_inferred"]
    print(f"stored frames {stored} == inferred {summary['frames_inferred']}: {ok}")


if __name__ == "__main__":
    main()
