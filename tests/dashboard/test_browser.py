"""End to end in a real browser: `spraycv daemon` process -> dashboard process -> Chromium.

The angle the operator sees for the frame number shown must be the one stored in SQLite
for that frame. Skipped only where Debian's chromium or the playwright package is missing.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dashboard_support import daemon_config_dict, dashboard_page, wait_for, wait_settled
from listening import listening_port

from spraycv.dashboard.client import DaemonClient, DaemonError
from spraycv.dashboard.launch import CHROMIUM
from spraycv.dashboard.live import parse_caption
from spraycv.stream.store import StoreReader

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)
if not CHROMIUM.is_file():
    pytest.skip(f"{CHROMIUM} missing (apt-get install chromium)", allow_module_level=True)

# One synchronous read of the DOM: the frame captions and every metric card's label and value.
READ_LIVE = """() => ({
  captions: [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .map(e => e.innerText.trim()),
  metrics: [...document.querySelectorAll('[data-testid="stMetric"]')].map(m => [
    m.querySelector('[data-testid="stMetricLabel"]').innerText.trim(),
    m.querySelector('[data-testid="stMetricValue"]').innerText.trim()]),
})"""


def healthy(url: str) -> bool:
    try:
        return DaemonClient(url, timeout=2).health()["status"] == "ok"
    except DaemonError:
        return False


@pytest.fixture
def daemon_process(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """`python -m spraycv daemon --config X.yaml` on the sample video: (url, db, config).

    Its API binds port 0; the port is read from the process's listening socket.
    """
    config = tmp_path / "daemon.yaml"
    config.write_text(yaml.safe_dump(daemon_config_dict(tmp_path, port=0)))
    log = tmp_path / "daemon.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "spraycv", "daemon", "--config", str(config)],
        stdout=subprocess.DEVNULL, stderr=log.open("w"),
    )  # fmt: skip
    try:
        wait_for(lambda: process.poll() is not None or listening_port(process.pid), 60, "the API")
        assert process.poll() is None, log.read_text()
        url = f"http://127.0.0.1:{listening_port(process.pid)}"
        wait_for(lambda: process.poll() is not None or healthy(url), 60, "the daemon's health")
        assert process.poll() is None, log.read_text()
        yield url, tmp_path / "db.sqlite", config
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def shown_frames(read: dict) -> list[tuple[str, int]]:
    return [c for c in map(parse_caption, read["captions"]) if c is not None]


def read_stable(page) -> tuple[str, int, dict[str, str]]:
    """(source, frame number, {label: value}) read twice, 0.25 s apart, identical.

    The page refreshes every 1.5 s and redraws element by element; two equal reads around
    a pause fall between refreshes, so the caption and the numbers belong together.
    """
    read = wait_settled(
        lambda: page.evaluate(READ_LIVE), 30, "a stable read of the live page", every=0.25,
        accept=lambda r: len(shown_frames(r)) == 1 and r["metrics"],
    )  # fmt: skip
    source, frame_no = shown_frames(read)[0]
    return source, frame_no, dict(read["metrics"])


def test_browser_shows_the_stored_angle_of_the_frame_shown(
    daemon_process: tuple[str, Path, Path], tmp_path: Path
) -> None:
    url, db, config = daemon_process
    env = {"SPRAYCV_DAEMON_URL": url, "SPRAYCV_DAEMON_CONFIG": str(config),
           "SPRAYCV_DASHBOARD_DIR": str(tmp_path / "dashboard")}  # fmt: skip
    with dashboard_page(env, tmp_path) as page:
        page.wait_for_selector('[data-testid="stImage"] img', timeout=60_000)
        page.wait_for_selector('[data-testid="stMetricValue"]', timeout=60_000)
        source, frame_no, metrics = read_stable(page)
        shot = tmp_path / "live.png"
        page.screenshot(path=str(shot), full_page=True)

    store = StoreReader(db)
    wait_for(lambda: store.frame_measurements(source, frame_no), 10, "the frame in SQLite")
    rows = [r for r in store.frame_measurements(source, frame_no) if r["nozzle_id"] is not None]
    assert source == "cam0" and sorted(metrics) == [f"Nozzle {r['nozzle_id']}" for r in rows]
    for r in rows:
        stored = r["smoothed_angle_deg"]
        stored = r["included_angle_deg"] if stored is None else stored
        shown = float(metrics[f"Nozzle {r['nozzle_id']}"].rstrip("°"))
        assert shown == pytest.approx(stored, abs=0.05 + 1e-9), (frame_no, r)
    assert shot.stat().st_size > 10_000
