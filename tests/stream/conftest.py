"""Fixtures of the stream tests: the shipped model, loaded once, and daemon configs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from spraycv.config.daemon import DaemonConfig
from spraycv.paths import default_weights
from spraycv.runtime.predictor import Predictor, load_predictor


@pytest.fixture(scope="session")
def shipped_predictor() -> Predictor:
    return load_predictor(default_weights(), "cpu", threads=1)


@pytest.fixture
def daemon_config(tmp_path: Path) -> Callable[..., DaemonConfig]:
    """Factory: a config with fast reconnects, a temp database and any free API port."""

    def make(sources: list[dict], **sections: dict) -> DaemonConfig:
        data = {
            "sources": [
                {"open_timeout_s": 2, "read_timeout_s": 2, "max_fps": 20, **s} for s in sources
            ],
            "reconnect": {"initial_s": 0.2, "max_s": 1.0, "failed_after": 3},
            "store": {"path": str(tmp_path / "db.sqlite"), "flush_every_s": 0.1},
            "api": {"port": 0},
            "alarms": {"snapshot_dir": str(tmp_path / "alarms")},
            **sections,
        }
        return DaemonConfig.model_validate(data)

    return make
