"""`spraycv daemon` as a real process on a real ffmpeg MJPEG stream: drops and SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from stream_helpers import SAMPLE_VIDEO, wait_for

from spraycv.stream.serve import FfmpegMjpegServer, free_port
from spraycv.stream.store import StoreReader


def api(port: int, path: str) -> object:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        body = response.read().decode()
    return body if path == "/metrics" else json.loads(body)


def responds(port: int) -> bool:
    try:
        return api(port, "/health")["status"] == "ok"
    except OSError:
        return False


def metric(port: int, name: str) -> float:
    """Sum of a metric's series in the Prometheus text."""
    total = 0.0
    for line in api(port, "/metrics").splitlines():
        if line.startswith(f"spraycv_{name}{{") or line.startswith(f"spraycv_{name} "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def start_daemon(tmp_path: Path, url: str) -> tuple[subprocess.Popen, int, Path]:
    port = free_port()
    config = {
        "sources": [{"name": "cam", "url": url, "max_fps": 10, "open_timeout_s": 2,
                     "read_timeout_s": 2}],
        "reconnect": {"initial_s": 0.2, "max_s": 1.0},
        "inference": {"threads": 1},
        "store": {"path": str(tmp_path / "db.sqlite"), "flush_every_s": 0.2},
        "api": {"port": port},
        "alarms": {"snapshot_dir": str(tmp_path / "alarms")},
    }  # fmt: skip
    path = tmp_path / "daemon.yaml"
    path.write_text(yaml.safe_dump(config))
    log = (tmp_path / "daemon.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "spraycv", "daemon", "--config", str(path)],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )  # fmt: skip
    wait_for(lambda: process.poll() is not None or responds(port), 60, "the daemon's API")
    assert process.poll() is None, (tmp_path / "daemon.log").read_text()
    return process, port, tmp_path / "daemon.log"


def stop_daemon(process: subprocess.Popen, sig: int = signal.SIGTERM) -> tuple[dict, float]:
    """Send the signal; returns (the summary printed on exit, seconds to exit)."""
    started = time.monotonic()
    process.send_signal(sig)
    out, _ = process.communicate(timeout=30)
    elapsed = time.monotonic() - started
    assert process.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])["stopped"], elapsed


def test_reconnects_through_stream_server_restarts_and_loses_nothing(tmp_path: Path) -> None:
    server = FfmpegMjpegServer(SAMPLE_VIDEO, fps=10).start()
    process, port, log = start_daemon(tmp_path, server.url)
    try:
        wait_for(lambda: metric(port, "frames_inferred_total") >= 5, 60, "first frames")
        for restart in range(1, 4):
            server.kill()  # the camera loses power mid-stream
            wait_for(lambda: api(port, "/sources")[0]["state"] != "connected", 20, "the drop")
            time.sleep(0.5)
            before = metric(port, "frames_inferred_total")
            server.start()
            wait_for(lambda r=restart: metric(port, "reconnects_total") >= r, 30, "a reconnect")
            wait_for(lambda b=before: metric(port, "frames_inferred_total") > b + 3, 30, "frames")
            assert process.poll() is None, log.read_text()
        scraped = metric(port, "frames_inferred_total")
        summary, elapsed = stop_daemon(process)
    finally:
        process.kill()
        server.stop()
    counts = StoreReader(tmp_path / "db.sqlite").counts()
    print(f"\nframes inferred {summary['frames_inferred']}, stored {counts}, exit {elapsed:.2f} s")
    assert counts["frames"] == summary["frames_inferred"] >= scraped
    assert counts["measurements"] == summary["measurements_written"] > 0
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert sum(line["msg"] == "source_lost" for line in lines) == 3
    assert sum(line["msg"] == "source_connected" for line in lines) == 4
    assert elapsed < 5


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_run_loses_nothing_and_exits_0(tmp_path: Path, sig: int) -> None:
    process, port, _ = start_daemon(tmp_path, str(SAMPLE_VIDEO))
    try:
        wait_for(lambda: metric(port, "frames_inferred_total") >= 10, 60, "10 frames")
        summary, elapsed = stop_daemon(process, sig)
    finally:
        process.kill()
    counts = StoreReader(tmp_path / "db.sqlite").counts()
    print(f"\n{sig!s}: {summary}, stored {counts}, exit {elapsed:.2f} s")
    assert counts["frames"] == summary["frames_inferred"] == summary["frames_written"] >= 10
    assert counts["measurements"] == summary["measurements_written"]
    assert elapsed < 5


def test_start_errors_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    cases = {
        "no source": [],
        "bad model": ["--source", str(SAMPLE_VIDEO), "--weights", str(tmp_path / "file.onnx")],
        "bad db": ["--source", str(SAMPLE_VIDEO), "--db", str(tmp_path / "file" / "db.sqlite")],
        "bad key": ["--source", str(SAMPLE_VIDEO), "api.prot=1"],
    }
    expected = {
        "no source": "no sources configured",
        "bad model": "failed to load",
        "bad db": "cannot create the database folder",
        "bad key": "api.prot",
    }
    for name, args in cases.items():
        run = subprocess.run(
            [sys.executable, "-m", "spraycv", "daemon", *args],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
        assert run.returncode == 2, (name, run.stderr)
        assert expected[name] in run.stderr, (name, run.stderr)
