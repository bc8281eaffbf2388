"""The daemon's HTTP API on a real daemon in-process: health states, methods, bad queries,
the row cap, the per-client and idle limits, and no URL password in any output."""

from __future__ import annotations

import io
import json
import logging
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from mjpeg_server import MjpegServer
from stream_helpers import SAMPLE_VIDEO, wait_for

from spraycv.dashboard.client import DaemonClient
from spraycv.stream.daemon import Daemon
from spraycv.stream.loadgen import burst, idle_connections, seed_measurements, still_open
from spraycv.stream.logs import JsonFormatter
from spraycv.stream.store import StoreReader

PASSWORD = "hunter2"


def call(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.fixture
def started(daemon_config, shipped_predictor) -> Iterator:
    """Factory: a started daemon on the given sources and sections; stopped after the test."""
    daemons: list[Daemon] = []

    def make(sources: list[dict], **sections: dict) -> Daemon:
        daemons.append(Daemon(daemon_config(sources, **sections), shipped_predictor).start())
        return daemons[-1]

    yield make
    for daemon in daemons:
        daemon.stop()


def test_health_is_degraded_with_a_source_down_and_failed_with_none(
    started, refused_port: int
) -> None:
    dead = f"http://127.0.0.1:{refused_port}/x.mjpg"
    daemon = started([{"name": "demo", "url": str(SAMPLE_VIDEO)}, {"name": "dead", "url": dead}])
    wait_for(lambda: daemon.readers["dead"].state.value == "failed", what="dead source failed")
    wait_for(lambda: daemon.readers["demo"].state.value == "connected", what="demo streams")
    status, _, body = call(f"{daemon.api.url}/health")
    health = json.loads(body)
    assert (status, health["status"], health["streaming"]) == (200, "degraded", True)
    assert health["sources"] == {"demo": "connected", "dead": "failed"}

    daemon.readers["demo"].stop()  # the last streaming source goes away
    wait_for(lambda: daemon.readers["demo"].state.value == "stopped", what="demo stopped")
    status, _, body = call(f"{daemon.api.url}/health")
    assert status == 503
    assert (json.loads(body)["status"], json.loads(body)["streaming"]) == ("failed", False)
    assert DaemonClient(daemon.api.url).health()["status"] == "failed"  # the dashboard reads it


def test_health_is_ok_when_every_source_streams(started) -> None:
    daemon = started([{"name": "demo", "url": str(SAMPLE_VIDEO)}])
    wait_for(lambda: daemon.readers["demo"].state.value == "connected", what="demo streams")
    status, _, body = call(f"{daemon.api.url}/health")
    assert (status, json.loads(body)["status"]) == (200, "ok")


def test_other_methods_get_a_json_405_and_no_version_banner(started) -> None:
    daemon = started([{"name": "demo", "url": str(SAMPLE_VIDEO)}])
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        status, headers, body = call(f"{daemon.api.url}/measurements", method)
        assert status == 405, method
        assert headers["Allow"] == "GET, HEAD"
        assert headers["Content-Type"] == "application/json"
        assert "not allowed" in json.loads(body)["error"]
        assert headers.get("Server") == "spraycv"  # no server software or Python version
    status, headers, body = call(f"{daemon.api.url}/nope")
    assert (status, headers["Content-Type"]) == (404, "application/json")
    status, headers, body = call(f"{daemon.api.url}/sources", "HEAD")
    assert (status, body) == (200, b"")


@pytest.mark.parametrize(
    "query",
    ["since=nan", "until=nan", "since=inf", "until=-inf", "since=NaN&until=1", "limit=nan",
     "limit=0", "since=yesterday"],
)  # fmt: skip
def test_non_finite_or_bad_query_numbers_are_400(started, query: str) -> None:
    daemon = started([{"name": "demo", "url": str(SAMPLE_VIDEO)}])
    for path in ("/measurements", "/events"):
        status, _, body = call(f"{daemon.api.url}{path}?{query}")
        assert status == 400, (path, query)
        assert json.loads(body)["error"]


def test_rows_per_response_are_capped_and_the_client_pages(
    daemon_config, shipped_predictor, tmp_path: Path
) -> None:
    demo = [{"name": "demo", "url": str(SAMPLE_VIDEO)}]
    cfg = daemon_config(demo, api={"port": 0, "max_rows": 100})
    seed_measurements(cfg.store.path, frames=100)  # 300 rows of source "archive"
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        status, headers, body = call(f"{daemon.api.url}/measurements?source=archive&limit=99999")
        assert (status, headers["X-Row-Cap"], len(json.loads(body))) == (200, "100", 100)
        paged = DaemonClient(daemon.api.url).measurements(0, None, "archive", 250)
        assert paged == StoreReader(cfg.store.path).measurements(0, None, "archive", 250)
        assert len(DaemonClient(daemon.api.url).measurements(0, None, "archive", 10**6)) == 300
    finally:
        daemon.stop()


def test_a_query_over_the_request_timeout_is_a_503(daemon_config, shipped_predictor) -> None:
    cfg = daemon_config(
        [{"name": "demo", "url": str(SAMPLE_VIDEO)}],
        api={"port": 0, "request_timeout_s": 1e-6},  # any real query runs longer
    )
    seed_measurements(cfg.store.path, frames=1000)
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        status, _, body = call(f"{daemon.api.url}/measurements?source=archive")
        assert status == 503
        assert "query took longer than" in json.loads(body)["error"]
    finally:
        daemon.stop()


def test_one_client_cannot_hold_every_connection_and_idle_ones_are_closed(started) -> None:
    limits = {"port": 0, "max_connections_per_client": 4, "idle_timeout_s": 1}
    daemon = started([{"name": "demo", "url": str(SAMPLE_VIDEO)}], api=limits)
    host, port = "127.0.0.1", daemon.api.port
    with idle_connections(host, port, count=10, clients=1) as idle:
        wait_for(lambda: sum(not still_open(s) for s in idle) >= 6, 10, "6 refused")
        assert sum(still_open(s) for s in idle) <= 4
        # another client is still served (/sources: 200 whatever state the source is in;
        # /health is 503 until the source has connected, which this test does not wait for)
        (outcome,) = burst(host, port, "/sources", count=1, clients=1)
        assert outcome.answered, outcome
        # and the idle ones are closed after the idle timeout (checked every second)
        wait_for(lambda: not any(still_open(s) for s in idle), 10, "the idle ones closed")
    assert daemon.api.refused >= 6


def _jpeg() -> bytes:
    image = np.full((240, 320, 3), 30, np.uint8)
    cv2.fillPoly(image, [np.array([[160, 30], [60, 230], [260, 230]])], 230)
    return cv2.imencode(".jpg", image)[1].tobytes()


@pytest.fixture
def captured_logs() -> Iterator[io.StringIO]:
    """The spraycv log lines, formatted as the daemon writes them to stderr."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("spraycv")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield out
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_no_output_shows_a_url_password(
    started, captured_logs: io.StringIO, refused_port: int
) -> None:
    server = MjpegServer(lambda i: _jpeg(), fps=20)  # ignores the credentials, as a test rig
    camera = server.url.replace("http://", f"http://admin:{PASSWORD}@")
    dead = f"rtsp://admin:{PASSWORD}@127.0.0.1:{refused_port}/stream1"
    sources = [{"name": "cam", "url": camera}, {"name": "dead", "url": dead}]
    daemon = started(sources)
    try:
        wait_for(lambda: daemon.metrics.counter_total("frames_inferred_total") >= 3, what="frames")
        server.close()  # the camera goes away: a source_lost event
        wait_for(lambda: daemon.readers["cam"].state.value != "connected", what="stream lost")
        wait_for(lambda: len(daemon.store.events()) >= 2, what="the events stored")
        shown = {
            path: call(f"{daemon.api.url}{path}")[2].decode()
            for path in ("/health", "/sources", "/latest", "/events", "/measurements", "/metrics")
        }
    finally:
        server.close()
    stored = json.dumps(StoreReader(daemon.config.store.path).events())
    logs = captured_logs.getvalue()
    for where, text in [*shown.items(), ("stored events", stored), ("log lines", logs)]:
        assert PASSWORD not in text, where
    assert "http://admin:***@127.0.0.1" in shown["/sources"]
    assert "rtsp://admin:***@127.0.0.1" in shown["/sources"]
    assert "admin:***@" in shown["/events"] and "admin:***@" in stored  # "stream up: <url>"
    assert "admin:***@" in logs  # the start line lists the sources' URLs
    assert all(json.loads(line) for line in logs.splitlines())


def test_a_busy_port_fails_the_start_before_the_database(daemon_config, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cfg = daemon_config([{"name": "demo", "url": str(SAMPLE_VIDEO)}], api={"port": port})
        with pytest.raises(OSError, match=f"API cannot listen on 127.0.0.1:{port}"):
            Daemon(cfg)
    assert not cfg.store.path.exists()
