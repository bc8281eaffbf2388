"""The dashboard's settings, from environment variables (every default lives here)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from spraycv.io.images import configured_max_pixels
from spraycv.paths import REPO_ROOT

ENV_URL = "SPRAYCV_DAEMON_URL"  # a running daemon's API; unset: the embedded daemon
ENV_TOKEN = "SPRAYCV_DAEMON_TOKEN"  # its bearer token, if it has one
ENV_CONFIG = "SPRAYCV_DAEMON_CONFIG"  # its YAML config: the spec bands (the API has no spec)
ENV_MAX_UPLOAD_MB = "SPRAYCV_DASHBOARD_MAX_UPLOAD_MB"  # also Streamlit's server.maxUploadSize
ENV_REFRESH_S = "SPRAYCV_DASHBOARD_REFRESH_S"
ENV_OUTPUT_DIR = "SPRAYCV_DASHBOARD_DIR"  # the embedded daemon's database and alarm snapshots
ENV_DB = "SPRAYCV_DB"  # a fleet's database (postgresql://...): the Fleet view, History from it


def _float(environ: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    """A number from the environment; a bad value falls back to the default (never a crash)."""
    try:
        value = float(environ.get(name, default))
    except ValueError:
        return default
    return min(max(value, low), high)


@dataclass(frozen=True)
class Settings:
    daemon_url: str | None
    token: str | None
    daemon_config: Path | None
    max_upload_mb: float
    max_pixels: int  # the image limit shared with the CLI (spraycv.io.images)
    refresh_s: float
    output_dir: Path
    db_url: str | None = None  # set: the fleet dashboard, reading the database directly

    @property
    def fleet(self) -> bool:
        return self.db_url is not None

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the environment now (tests and the sidebar may change it between runs)."""
    env = os.environ if environ is None else environ
    config = env.get(ENV_CONFIG, "").strip()
    return Settings(
        daemon_url=env.get(ENV_URL, "").strip() or None,
        token=env.get(ENV_TOKEN, "").strip() or None,
        daemon_config=Path(config) if config else None,
        max_upload_mb=_float(env, ENV_MAX_UPLOAD_MB, 100.0, 0.0001, 10_000.0),
        max_pixels=configured_max_pixels(env),
        # faster than 0.5 s only loads the daemon; slower than 10 s is no longer "live"
        refresh_s=_float(env, ENV_REFRESH_S, 1.5, 0.5, 10.0),
        output_dir=Path(env.get(ENV_OUTPUT_DIR, REPO_ROOT / "outputs" / "dashboard")),
        db_url=env.get(ENV_DB, "").strip() or None,
    )
