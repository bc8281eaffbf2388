"""The stream daemon's config: sources, model, tracking, spec rules, store and HTTP API."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator, model_validator

from spraycv.config.base import StrictModel
from spraycv.config.geometry import GeometryConfig


class SpecRule(StrictModel):
    """A nozzle's specification: nominal included angle and tolerance, e.g. 110 +- 5 deg."""

    nominal_deg: float = Field(gt=0, lt=180)
    tolerance_deg: float = Field(gt=0, lt=90)

    def violated_by(self, angle_deg: float) -> bool:
        return abs(angle_deg - self.nominal_deg) > self.tolerance_deg


class SourceConfig(StrictModel):
    """One camera: an RTSP/HTTP URL, a USB device (index or /dev/videoN) or a video file."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    url: str = Field(min_length=1)
    max_fps: float = Field(default=5.0, gt=0)  # inference cap; readers always take the newest
    loop: bool = True  # video files restart at the end (demos); streams ignore it
    open_timeout_s: float = Field(default=5.0, gt=0)
    read_timeout_s: float = Field(default=5.0, gt=0)
    mm_per_px: float | None = Field(default=None, gt=0)  # camera scale (spraycv calibrate)
    # the rig, for the ground coverage of each nozzle and the overlap with its neighbour
    nozzle_height_mm: float | None = Field(default=None, gt=0)
    nozzle_spacing_mm: float | None = Field(default=None, gt=0)
    spec: SpecRule | None = None  # default rule for every nozzle of this source
    nozzle_specs: dict[int, SpecRule] = Field(default_factory=dict)  # per nozzle id

    def rule_for(self, nozzle_id: int, default: SpecRule | None) -> SpecRule | None:
        return self.nozzle_specs.get(nozzle_id, self.spec or default)


class ReconnectConfig(StrictModel):
    """Exponential backoff between reopen attempts of a failed source."""

    initial_s: float = Field(default=0.5, gt=0)
    max_s: float = Field(default=10.0, gt=0)
    factor: float = Field(default=2.0, ge=1)
    # after this many failed attempts in a row a source is reported "failed" (it keeps trying)
    failed_after: int = Field(default=5, ge=1)


class InferenceConfig(StrictModel):
    """Model, backend and batching of the inference worker."""

    weights: Path | None = None  # None: the shipped model (spraycv.paths.default_weights)
    device: str = "cpu"
    # on a CPU small batches keep frame-to-measurement latency low at the same throughput
    # (benchmarks/daemon_load.py); raise it on a GPU
    max_batch: int = Field(default=2, ge=1)
    threads: int | None = Field(default=None, ge=1)  # torch / ORT intra-op threads
    # re-read each plume near its orifice with the refiner stored beside the weights
    # (spraycv.formats.refiner_companion), when there is one
    refine: bool = True
    # a source whose frames show no spray skips the search of frames the first look finds
    # nothing in (the tiled look for a far view, the quarter-turned looks for a spray seen
    # side-on) but for one frame every this many seconds: an idle camera's frame then costs
    # its first look alone; 0: every such frame is searched (spraycv.stream.idle). Its name
    # before the turned looks, idle_tiles_every_s, is still read.
    idle_search_every_s: float = Field(
        default=10.0,
        ge=0,
        validation_alias=AliasChoices("idle_search_every_s", "idle_tiles_every_s"),
    )


class TrackingConfig(StrictModel):
    """Stable nozzle ids across frames, the smoothing of their readings, and their spread.

    Smoothing is temporal: a nozzle's smoothed angle and apex pool its last `window`
    reliable readings (an unreliable or unmeasured one is skipped). The model's masks of a
    steady spray flicker with its droplets and mist, so one frame's angle scatters by a few
    degrees (docs/benchmarks.md, "Steady spray"); the window's trimmed mean reads it to
    within a degree. The raw reading of every frame is kept and reported beside it.
    """

    max_match_px: float = Field(default=40.0, gt=0)  # apex distance for the same nozzle
    forget_after_s: float = Field(default=30.0, gt=0)  # a track unseen this long is dropped
    smoothing: Literal["trimmed_mean", "median", "ema", "none"] = "trimmed_mean"
    # reliable readings pooled by trimmed_mean and median (at 5 fps: 3 s)
    window: int = Field(default=15, ge=1)
    # trimmed_mean drops this share of the window at each end (a glitch is dropped, the
    # rest averaged: steadier than the median, as robust to one wild frame)
    trim_fraction: float = Field(default=0.2, ge=0, lt=0.5)
    # the apex pools more readings than the angle: a nozzle's orifice does not move while
    # it sprays, and the apex (where the boundary lines meet) scatters more than the angle
    apex_window: int = Field(default=30, ge=1)
    ema_alpha: float = Field(default=0.3, gt=0, le=1)
    # the spread (SD and range) of a nozzle's raw and smoothed readings is taken over its
    # last this many reliable readings (at 5 fps: 6 s)
    spread_window: int = Field(default=30, ge=2)


class AlarmConfig(StrictModel):
    """When a spec violation becomes an alarm and when it clears."""

    raise_after: int = Field(default=5, ge=1)  # consecutive smoothed violations
    clear_after: int = Field(default=5, ge=1)  # consecutive in-spec frames
    snapshot_dir: Path | None = Path("outputs/daemon/alarms")  # annotated frame per alarm


class StoreConfig(StrictModel):
    """Where measurements go: a SQLite file (the default), or a PostgreSQL server shared by a
    fleet (url; docs/fleet.md), reached through a local spool that outlasts outages."""

    path: Path = Path("outputs/daemon/spraycv.sqlite")
    flush_every_s: float = Field(default=0.5, gt=0)  # at most this long between commits
    retention_days: float | None = Field(default=30.0, gt=0)  # None keeps everything
    # postgresql://role@host/db?sslmode=verify-full; None: the SQLite file at `path`
    url: str | None = Field(default=None, pattern=r"^postgres(ql)?://")
    site: str = Field(default="default", min_length=1)  # on every row: a farm, a lab
    machine: str = Field(default_factory=socket.gethostname, min_length=1)  # unique per daemon
    spool_path: Path = Path("outputs/daemon/spool.sqlite")  # batches not yet on the server
    pool_size: int = Field(default=2, ge=1, le=20)  # connections to the server, at most
    connect_timeout_s: float = Field(default=5.0, gt=0)
    retry_s: float = Field(default=1.0, gt=0)  # between attempts while the link is down
    drain_on_stop_s: float = Field(default=5.0, ge=0)  # forwarding at a stop; the rest waits
    migrate: bool = True  # False for a role that may not change the schema (docs/fleet.md)


class ApiConfig(StrictModel):
    """The HTTP API; loopback by default, a bearer token required anywhere else.

    The limits keep a flood of clients or idle sockets from tying the API (or the
    measuring) up: see spraycv/stream/api.py.
    """

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)  # 0: any free port
    token: str | None = None
    jpeg_quality: int = Field(default=85, ge=10, le=100)
    workers: int = Field(default=4, ge=1, le=64)  # threads that run requests
    # requests waiting for a worker beyond this are answered 503 at once (/health excepted)
    max_waiting: int = Field(default=32, ge=1)
    max_connections: int = Field(default=1000, ge=1)  # open sockets in all (idle ones too)
    # per client IP address (behind a reverse proxy every client is the proxy)
    max_connections_per_client: int = Field(default=32, ge=1)
    idle_timeout_s: int = Field(default=10, ge=1)  # a socket with no request is closed
    request_timeout_s: float = Field(default=5.0, gt=0)  # the longest database query
    # rows per /measurements or /events response; a larger limit is capped (clients page)
    max_rows: int = Field(default=10_000, ge=100, le=100_000)

    @field_validator("token")
    @classmethod
    def _token_not_blank(cls, token: str | None) -> str | None:
        if token is not None and not token.strip():
            raise ValueError("api.token is blank: set a real token or leave it out (null)")
        return token

    @model_validator(mode="after")
    def _token_off_loopback(self) -> ApiConfig:
        if self.enabled and self.host not in ("127.0.0.1", "localhost", "::1") and not self.token:
            raise ValueError(f"api.host={self.host!r} is not loopback: set api.token")
        return self


class DaemonConfig(StrictModel):
    """Everything `spraycv daemon` needs; every default lives here."""

    sources: list[SourceConfig] = Field(default_factory=list)
    inference: InferenceConfig = Field(default_factory=InferenceConfig)
    geometry: GeometryConfig = Field(default_factory=GeometryConfig)
    spec: SpecRule | None = None  # default rule for every nozzle of every source
    tracking: TrackingConfig = Field(default_factory=TrackingConfig)
    alarms: AlarmConfig = Field(default_factory=AlarmConfig)
    reconnect: ReconnectConfig = Field(default_factory=ReconnectConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    api: ApiConfig = Field(default_factory=ApiConfig)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @field_validator("sources")
    @classmethod
    def _unique_names(cls, sources: list[SourceConfig]) -> list[SourceConfig]:
        names = [s.name for s in sources]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"source names must be unique; repeated: {', '.join(duplicates)}")
        return sources
