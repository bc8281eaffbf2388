"""The daemon: readers -> inference worker -> store, with an HTTP API and a graceful stop."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import cv2

from spraycv.config.daemon import DaemonConfig
from spraycv.formats import refiner_companion
from spraycv.paths import default_weights
from spraycv.redact import redact_credentials
from spraycv.refine.stage import Refiner
from spraycv.runtime.predictor import Predictor, load_predictor
from spraycv.stream.api import ApiServer, HealthStatus
from spraycv.stream.metrics import Metrics
from spraycv.stream.reader import SourceReader, SourceState
from spraycv.stream.schema import Origin
from spraycv.stream.spool import open_fleet_writer
from spraycv.stream.store import StoreError, StoreReader, StoreWriter
from spraycv.stream.worker import InferenceWorker

log = logging.getLogger("spraycv.stream.daemon")


class DaemonStartError(RuntimeError):
    """The daemon cannot start: no source, a model that fails to load, an unwritable database."""


def _rss_bytes() -> int:
    """Resident memory of this process (Linux /proc; 0 elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def load_model(config: DaemonConfig) -> Predictor:
    weights = config.inference.weights or default_weights()
    try:
        return load_predictor(weights, config.inference.device, config.inference.threads)
    except (ValueError, OSError, RuntimeError, ImportError) as exc:
        raise DaemonStartError(f"model {weights} failed to load: {exc}") from None


def load_refiner(config: DaemonConfig) -> Refiner | None:
    """The refiner stored beside the weights, unless refining is off or there is none."""
    inference = config.inference
    companion = refiner_companion(inference.weights or default_weights())
    if not (inference.refine and companion.is_file()):
        return None
    try:
        return Refiner(load_predictor(companion, inference.device, inference.threads))
    except (ValueError, OSError, RuntimeError, ImportError) as exc:
        raise DaemonStartError(f"refiner {companion} failed to load: {exc}") from None


def open_writer(config: DaemonConfig) -> StoreWriter:
    """Create or migrate a SQLite file, or open the spool of a server; start nothing yet."""
    store = config.store
    try:
        if store.url is not None:
            return open_fleet_writer(store)
        return StoreWriter(
            store.path, store.flush_every_s, store.retention_days,
            origin=Origin(store.site, store.machine),
        )  # fmt: skip
    except StoreError as exc:
        raise DaemonStartError(str(exc)) from None


def health_status(streaming: int, sources: int, pipeline_alive: bool) -> HealthStatus:
    """failed: nothing is measured; degraded: some sources are down; ok: all stream."""
    if streaming == 0 or not pipeline_alive:
        return HealthStatus.FAILED
    return HealthStatus.OK if streaming == sources else HealthStatus.DEGRADED


class Daemon:
    """Builds every part from a config; `start()`, then `stop()` (or `run_until_signal()`)."""

    def __init__(self, config: DaemonConfig, predictor: Predictor | None = None):
        if not config.sources:
            raise DaemonStartError("no sources configured: give --source or a config file")
        self.config = config
        self.started_at = time.time()
        self.metrics = Metrics()
        self._wake = threading.Condition()
        self.readers = {
            s.name: SourceReader(s, config.reconnect, self._wake) for s in config.sources
        }
        self.store = StoreReader(
            config.store.url or config.store.path, config.api.request_timeout_s, pool_size=2
        )
        # Everything that can fail is checked before the disk is touched: the API port, then
        # the model (seconds); only then is the database created or migrated.
        with contextlib.ExitStack() as undo:
            self.api = ApiServer(self, config.api) if config.api.enabled else None
            if self.api is not None:
                undo.callback(self.api.stop)
            self.predictor = predictor or load_model(config)
            refiner = load_refiner(config)
            self.writer = open_writer(config)
            undo.pop_all()
        self.worker = InferenceWorker(
            config, self.readers, self._wake, self.predictor, self.writer, self.metrics, refiner
        )
        self._register_metrics()
        self.rss_start = _rss_bytes()
        self._stopped = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> Daemon:
        self.writer.start()
        self.worker.start()
        for reader in self.readers.values():
            reader.start()
        if self.api is not None:
            self.api.start()
        log.info(
            "daemon started",
            extra={
                "sources": {n: redact_credentials(r.config.url) for n, r in self.readers.items()},
                "model": self.predictor.name,
                "db": self.writer.location,
                "site": self.writer.origin.site,
                "machine": self.writer.origin.machine,
                "api": self.api.url if self.api else None,
            },
        )
        return self

    def stop(self, timeout: float = 10.0) -> dict[str, Any]:
        """Stop readers, finish the frames in flight, commit everything; returns the totals."""
        if self._stopped.is_set():
            return self.summary()
        for reader in self.readers.values():
            reader.stop()
        self.worker.stop()
        if self.worker.ident is not None:  # a daemon built but never started stops too
            self.worker.join(timeout)
        self.writer.close(timeout)
        if self.api is not None:
            self.api.stop()
        self.store.close()
        for reader in self.readers.values():
            # A reader inside OpenCV's open or read must come back before the interpreter
            # exits: a thread unwound inside OpenCV at exit aborts the process.
            if reader.ident is not None:
                reader.join(reader.config.open_timeout_s + reader.config.read_timeout_s)
        self._stopped.set()
        summary = self.summary()
        log.info("daemon stopped", extra=summary)
        return summary

    def run_until_signal(self) -> dict[str, Any]:
        """Run until SIGTERM or SIGINT, then stop gracefully (main thread only)."""
        stop = threading.Event()

        def on_signal(signum: int, _frame: Any) -> None:
            log.info("signal received", extra={"signal": signal.Signals(signum).name})
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_signal)
        self.start()
        while not stop.wait(0.2):
            pass
        return self.stop()

    # -- what the API and the dashboard read -----------------------------------------------
    def summary(self) -> dict[str, Any]:
        return {
            "frames_inferred": int(self.metrics.counter_total("frames_inferred_total")),
            "frames_written": self.writer.frames_written,
            "measurements_written": self.writer.measurements_written,
            "events_written": self.writer.events_written,
            "rss_start_bytes": self.rss_start,
            "rss_bytes": _rss_bytes(),
        }

    def health(self) -> dict[str, Any]:
        states = {name: str(r.state) for name, r in self.readers.items()}
        streaming = sum(r.state is SourceState.CONNECTED for r in self.readers.values())
        alive = self.worker.is_alive() and self.writer.is_alive()
        return {
            "status": str(health_status(streaming, len(self.readers), alive)),
            "streaming": streaming > 0,
            "pipeline_alive": alive,
            "uptime_s": round(time.time() - self.started_at, 3),
            "model": self.predictor.name,
            "backend": self.predictor.backend,
            "sources": states,
            "store": self.writer.status(),
        }

    def sources_status(self) -> list[dict[str, Any]]:
        out = []
        for name, reader in self.readers.items():
            status = reader.status()
            status["frames_inferred"] = int(
                self.metrics.counter("frames_inferred_total", {"source": name})
            )
            source = self.worker.sources[name]
            rule = source.spec or self.config.spec  # what the dashboard draws as the band
            status["spec"] = rule.model_dump() if rule else None
            status["nozzle_specs"] = {
                str(k): v.model_dump() for k, v in source.nozzle_specs.items()
            }
            out.append(status)
        return out

    def latest(self, source: str | None = None) -> dict[str, Any]:
        """{source: newest frame record with its nozzles} (only sources measured so far)."""
        names = [source] if source else list(self.readers)
        out = {}
        for name in names:
            latest = self.worker.get_latest(name)
            if latest is not None:
                out[name] = latest.record.to_dict()
        return out

    def latest_jpeg(self, source: str) -> bytes | None:
        latest = self.worker.get_latest(source)
        if latest is None:
            return None
        quality = [cv2.IMWRITE_JPEG_QUALITY, self.config.api.jpeg_quality]
        ok, buffer = cv2.imencode(".jpg", latest.annotated(), quality)
        return buffer.tobytes() if ok else None

    def metrics_text(self) -> str:
        return self.metrics.render()

    def _register_metrics(self) -> None:
        m, readers, writer = self.metrics, self.readers, self.writer

        def per_source(attr: str) -> Any:
            return lambda: {(("source", n),): getattr(r, attr) for n, r in readers.items()}

        m.describe("frames_inferred_total", "frames run through the model and handed to the store")
        m.describe("frame_latency_seconds", "capture to measurement, per frame")
        m.gauge("frames_read_total", per_source("frames_read"), kind="counter")
        m.gauge("frames_dropped_total", per_source("frames_dropped"), kind="counter")
        m.gauge("frames_bad_total", per_source("frames_bad"), kind="counter")
        m.gauge("reconnects_total", per_source("reconnects"), kind="counter")
        m.gauge(
            "source_up",
            lambda: {
                (("source", n),): float(r.state is SourceState.CONNECTED)
                for n, r in readers.items()
            },
        )
        m.gauge("frames_written_total", lambda: {(): writer.frames_written}, kind="counter")
        m.gauge(
            "measurements_written_total", lambda: {(): writer.measurements_written}, kind="counter"
        )
        m.gauge("store_errors_total", lambda: {(): writer.errors}, kind="counter")
        m.describe("spool_depth", "frames and events spooled locally, not yet on the server")
        m.gauge("spool_depth", lambda: {(): writer.status()["spool_depth"]})
        m.describe("store_link_up", "1 while the database answers (always 1 for a local file)")
        m.gauge("store_link_up", lambda: {(): float(writer.status()["link"] in ("up", "local"))})
        m.gauge("resident_memory_bytes", lambda: {(): _rss_bytes()})
        if self.api is not None:
            api = self.api
            m.describe("api_refused_total", "API connections or requests refused by a limit")
            m.gauge("api_refused_total", lambda: {(): api.refused}, kind="counter")
