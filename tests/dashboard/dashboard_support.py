"""Helpers of the dashboard tests (not in conftest.py: several test folders have one, so
`from conftest import` would be ambiguous)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from polling import wait_for, wait_settled  # noqa: F401  (re-exported for the tests here)

from spraycv.geometry import ConeMeasurement
from spraycv.paths import REPO_ROOT, SAMPLES_DIR
from spraycv.stream.daemon import Daemon
from spraycv.stream.records import FrameRecord, NozzleRecord, SpecStatus
from spraycv.stream.store import StoreReader

SAMPLE_VIDEO = SAMPLES_DIR / "video.mp4"
APP = REPO_ROOT / "app"
HOME = str(APP / "Home.py")


def page(name: str) -> str:
    """Path of a page script, e.g. page('1_Analyse')."""
    return str(APP / "pages" / f"{name}.py")


def sample_images() -> list[Path]:
    return sorted((SAMPLES_DIR / "images").glob("*.jpg"))


@dataclass(frozen=True)
class LiveDaemon:
    daemon: Daemon
    url: str
    db: Path
    config_path: Path

    @property
    def store(self) -> StoreReader:
        return StoreReader(self.db)


def daemon_config_dict(root: Path, port: int = 0, max_fps: float = 4.0) -> dict:
    """A daemon config on the sample video: temp database, fast flushes, one thread."""
    return {
        "sources": [{"name": "cam0", "url": str(SAMPLE_VIDEO), "max_fps": max_fps,
                     "open_timeout_s": 2, "read_timeout_s": 2,
                     "nozzle_specs": {0: {"nominal_deg": 40, "tolerance_deg": 2}}}],
        "spec": {"nominal_deg": 55, "tolerance_deg": 5},
        "inference": {"threads": 1},
        "store": {"path": str(root / "db.sqlite"), "flush_every_s": 0.1},
        "alarms": {"snapshot_dir": str(root / "alarms"), "raise_after": 3},
        "api": {"port": port},
    }  # fmt: skip


FLEET_MACHINES = {"m1": "north", "m2": "north", "m3": "south"}  # machine -> site


def fleet_frame(t: float, frame_no: int, source: str) -> FrameRecord:
    nozzles = [
        NozzleRecord.from_measurement(
            ConeMeasurement(index=i, included_angle_deg=110.0 + i), time=t, source=source,
            frame_no=frame_no, nozzle_id=i, smoothed=110.0 + i, spec_status=SpecStatus.OK,
            model="m", backend="onnx",
        )
        for i in range(2)
    ]  # fmt: skip
    return FrameRecord(t, source, frame_no, 640, 480, 0.05, nozzles)


@contextmanager
def dashboard_page(env: Mapping[str, str], folder: Path, path: str = "/") -> Iterator:
    """A dashboard process (port 0) with `env`, and a headless-Chromium page opened at
    `path`; both stopped on exit. The caller skips where playwright or chromium is missing."""
    from playwright import sync_api

    from spraycv.dashboard.launch import (
        CHROMIUM,
        CHROMIUM_ARGS,
        start_dashboard,
        stop,
        wait_until_up,
    )

    log = folder / "streamlit.log"
    dashboard = start_dashboard(log, env)  # on port 0: the URL is read from its log
    try:
        page_url = wait_until_up(dashboard, log)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"{page_url}{path}", wait_until="domcontentloaded")
                yield page
            finally:
                browser.close()
    finally:
        stop(dashboard)
