"""DaemonClient against a real daemon in-process: every endpoint, and the errors it raises."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dashboard_support import LiveDaemon

from spraycv.config.daemon import ApiConfig
from spraycv.dashboard.client import DaemonApiError, DaemonClient, DaemonUnreachable
from spraycv.stream.api import ApiServer


@pytest.fixture(scope="module")
def client(live_daemon: LiveDaemon) -> DaemonClient:
    return DaemonClient(live_daemon.url)


@pytest.fixture(scope="module")
def guarded(live_daemon: LiveDaemon) -> Iterator[str]:
    """A second API on the same daemon that wants a bearer token."""
    server = ApiServer(live_daemon.daemon, ApiConfig(port=0, token="s3cret"))
    server.start()
    yield server.url
    server.stop()


def test_health_latest_and_frame(client: DaemonClient) -> None:
    health = client.health()
    assert health["status"] == "ok" and health["backend"] == "onnxruntime"  # the shipped export
    assert list(client.latest()) == ["cam0"]
    assert client.latest("nope") == {}
    jpeg = client.frame_jpeg("cam0")
    assert jpeg is not None and jpeg[:2] == b"\xff\xd8"
    assert client.frame_jpeg("nope") is None  # 404: no frame measured for that source
    assert [s["name"] for s in client.sources()] == ["cam0"]


def test_snapshot_ties_the_picture_to_the_record(client: DaemonClient) -> None:
    snap = client.snapshot("cam0")
    assert snap is not None and snap.jpeg is not None
    assert snap.record["source"] == "cam0" and snap.record["nozzles"]
    assert client.snapshot("nope") is None


def test_history_queries_match_the_store(client: DaemonClient, live_daemon: LiveDaemon) -> None:
    rows = client.measurements(0, None, "cam0", 50)
    assert rows == live_daemon.store.measurements(0, None, "cam0", 50)
    assert client.events(0, None, None, 10) == live_daemon.store.events(0, None, None, 10)


@pytest.mark.parametrize(
    ("token", "error", "match"),
    [
        (None, DaemonApiError, "HTTP 401.*set the token"),
        ("wrong", DaemonApiError, "HTTP 401"),
        ("s3cret", None, None),
    ],
)
def test_bearer_token(guarded: str, token: str | None, error, match: str | None) -> None:
    client = DaemonClient(guarded, token)
    if error is None:
        assert client.health()["status"] == "ok"
    else:
        with pytest.raises(error, match=match):
            client.health()
    assert "s3cret" not in repr(client)


def test_bad_query_is_an_api_error(client: DaemonClient) -> None:
    with pytest.raises(DaemonApiError, match="limit must be at least 1") as caught:
        client.measurements(limit=0)
    assert caught.value.status == 400


def test_unreachable_daemon_says_what_to_check(refused_port: int) -> None:
    url = f"http://127.0.0.1:{refused_port}"
    with pytest.raises(DaemonUnreachable, match=r"cannot reach the spraycv daemon at .*running"):
        DaemonClient(url, timeout=2).health()


@pytest.mark.parametrize("url", ["", "localhost:8765", "ftp://host/", "http://"])
def test_malformed_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="http://HOST:PORT"):
        DaemonClient(url)
