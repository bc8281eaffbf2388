"""Fixtures of the dashboard tests: the shipped model once, a real daemon in-process, its env.

The daemon runs on the bundled sample video with the demo spec (55 +- 5 deg) and a spec
nozzle 0 cannot meet (40 +- 2 deg), so every status colour path and an open alarm exist.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dashboard_support import FLEET_MACHINES, LiveDaemon, daemon_config_dict, fleet_frame, wait_for

from spraycv.config.daemon import DaemonConfig
from spraycv.paths import default_weights
from spraycv.runtime.predictor import Predictor, load_predictor
from spraycv.stream.daemon import Daemon
from spraycv.stream.database import PostgresDatabase
from spraycv.stream.schema import Batch, Origin, prepare_schema


@pytest.fixture(scope="session")
def shipped_predictor() -> Predictor:
    return load_predictor(default_weights(), "cpu", threads=1)


@pytest.fixture(scope="module")
def live_daemon(
    tmp_path_factory: pytest.TempPathFactory, shipped_predictor: Predictor
) -> Iterator[LiveDaemon]:
    """A started daemon with an open alarm on nozzle 0 (module scope: it stops between files,
    so it never competes with the browser test's processes for the CPU)."""
    root = tmp_path_factory.mktemp("daemon")
    data = daemon_config_dict(root)
    config_path = root / "daemon.yaml"
    config_path.write_text(yaml.safe_dump(data))
    daemon = Daemon(DaemonConfig.model_validate(data), shipped_predictor).start()
    assert daemon.api is not None
    live = LiveDaemon(daemon, daemon.api.url, root / "db.sqlite", config_path)
    try:
        wait_for(
            lambda: (
                live.db.is_file() and any(e["kind"] == "alarm_raised" for e in live.store.events())
            ),
            60,
            "the alarm on nozzle 0 to be stored",
        )
        yield live
    finally:
        daemon.stop()


@pytest.fixture
def dashboard_env(
    monkeypatch: pytest.MonkeyPatch, live_daemon: LiveDaemon, tmp_path: Path
) -> LiveDaemon:
    """The environment of a dashboard pointed at the live daemon (and its spec YAML)."""
    monkeypatch.setenv("SPRAYCV_DAEMON_URL", live_daemon.url)
    monkeypatch.setenv("SPRAYCV_DAEMON_CONFIG", str(live_daemon.config_path))
    monkeypatch.delenv("SPRAYCV_DAEMON_TOKEN", raising=False)
    monkeypatch.setenv("SPRAYCV_DASHBOARD_DIR", str(tmp_path / "dashboard"))
    return live_daemon


@pytest.fixture
def fleet_db(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Three machines' rows of the last minute, the dashboard's environment pointed at them."""
    db = PostgresDatabase(pg_url)
    prepare_schema(db)
    now = time.time()
    for machine, site in FLEET_MACHINES.items():
        frames = [fleet_frame(now - 60 + i, i, "cam0") for i in range(30)]
        db.write(Batch.of(frames, Origin(site, machine)).statements())
    db.close()
    monkeypatch.setenv("SPRAYCV_DB", pg_url)
    monkeypatch.delenv("SPRAYCV_DAEMON_URL", raising=False)
    return pg_url
