"""`spraycv daemon` as a real process on a real ffmpeg MJPEG stream: drops and SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_process import api, metric, start_daemon, stop_daemon, stop_seconds
from ffmpeg_camera import FfmpegMjpegServer
from stream_helpers import SAMPLE_VIDEO, wait_for, wait_settled

from spraycv.stream.store import StoreReader


def test_reconnects_through_stream_server_restarts_and_loses_nothing(tmp_path: Path) -> None:
    server = FfmpegMjpegServer(SAMPLE_VIDEO, fps=10).start()
    process, port, log = start_daemon(tmp_path, server.url)
    try:
        wait_for(lambda: metric(port, "frames_inferred_total") >= 5, 60, "first frames")
        for restart in range(1, 4):
            server.kill()  # the camera loses power mid-stream
            wait_for(lambda: api(port, "/sources")[0]["state"] != "connected", 20, "the drop")
            # the frames in flight at the drop are measured: count from there
            before = wait_settled(lambda: metric(port, "frames_inferred_total"), 20, "a pause")
            server.start()
            wait_for(lambda r=restart: metric(port, "reconnects_total") >= r, 30, "a reconnect")
            wait_for(lambda b=before: metric(port, "frames_inferred_total") > b + 3, 30, "frames")
            assert process.poll() is None, log.read_text()
        scraped = metric(port, "frames_inferred_total")
        summary, elapsed = stop_daemon(process, signal.SIGTERM)
    finally:
        process.kill()
        server.stop()
    counts = StoreReader(tmp_path / "db.sqlite").counts()
    stopped = stop_seconds(log)
    print(
        f"\nframes inferred {summary['frames_inferred']}, stored {counts},"
        f" stop {stopped:.2f} s, exit {elapsed:.2f} s"
    )
    assert counts["frames"] == summary["frames_inferred"] >= scraped
    assert counts["measurements"] == summary["measurements_written"] > 0
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert sum(line["msg"] == "source_lost" for line in lines) == 3
    assert sum(line["msg"] == "source_connected" for line in lines) == 4
    assert stopped < 5


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_run_loses_nothing_and_exits_0(tmp_path: Path, sig: int) -> None:
    process, port, log = start_daemon(tmp_path, str(SAMPLE_VIDEO))
    try:
        wait_for(lambda: metric(port, "frames_inferred_total") >= 10, 60, "10 frames")
        summary, elapsed = stop_daemon(process, sig)
    finally:
        process.kill()
    counts = StoreReader(tmp_path / "db.sqlite").counts()
    stopped = stop_seconds(log)
    print(f"\n{sig!s}: {summary}, stored {counts}, stop {stopped:.2f} s, exit {elapsed:.2f} s")
    assert counts["frames"] == summary["frames_inferred"] == summary["frames_written"] >= 10
    assert counts["measurements"] == summary["measurements_written"]
    assert stopped < 5


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
        lines = [json.loads(line) for line in run.stderr.splitlines()]  # JSON, even these
        assert [line["msg"] for line in lines if line["level"] == "ERROR"] == ["cannot start"]
        assert expected[name] in lines[-1]["error"], (name, run.stderr)
    # the default database (outputs/daemon/ under the working folder) was never created
    assert not (tmp_path / "outputs").exists()


def test_every_stderr_line_is_json_with_a_broken_second_source(
    tmp_path: Path, refused_port: int
) -> None:
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(SAMPLE_VIDEO.read_bytes()[:20_000])  # cut short: FFmpeg finds no index
    locked = f"rtsp://admin:hunter2@127.0.0.1:{refused_port}/stream1"  # with a password
    process, port, log = start_daemon(
        tmp_path, str(SAMPLE_VIDEO),
        more_sources=[{"name": "broken", "url": str(broken)}, {"name": "locked", "url": locked}],
        reconnect={"initial_s": 0.2, "max_s": 0.5, "failed_after": 3},
    )  # fmt: skip
    try:
        wait_for(
            lambda: [s["state"] for s in api(port, "/sources")][1:] == ["failed", "failed"],
            60, "the broken sources to fail",
        )  # fmt: skip
        wait_for(lambda: metric(port, "frames_inferred_total") >= 5, 60, "frames of cam")
        stop_daemon(process, signal.SIGTERM)
    finally:
        process.kill()
    text = log.read_text()
    records = [json.loads(line) for line in text.splitlines()]  # fails on any other line
    failed = {r["source"] for r in records if r["msg"] == "source failed"}
    assert failed == {"broken", "locked"}
    assert "hunter2" not in text and "rtsp://admin:***@127.0.0.1" in text


def test_python_warnings_and_other_libraries_log_json_lines() -> None:
    code = (
        "import logging, warnings\n"
        "from spraycv.io.native_logs import quiet_native_logs\n"
        "from spraycv.stream.logs import setup_json_logging\n"
        "setup_json_logging(); quiet_native_logs()\n"
        "warnings.warn('careful', UserWarning)\n"
        "logging.getLogger('waitress').error('a library error')\n"
        "logging.getLogger('spraycv.x').info('ours', extra={'url': 'rtsp://a:hunter2@h/s'})\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    lines = [json.loads(line) for line in run.stderr.splitlines()]
    assert [(r["logger"], r["level"]) for r in lines] == [
        ("py.warnings", "WARNING"), ("waitress", "ERROR"), ("spraycv.x", "INFO"),
    ]  # fmt: skip
    assert "careful" in lines[0]["msg"] and lines[2]["url"] == "rtsp://a:***@h/s"
