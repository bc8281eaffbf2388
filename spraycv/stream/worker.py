"""The inference worker: batches the newest frames of all sources, measures, tracks, stores."""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from spraycv.config.daemon import DaemonConfig, SourceConfig
from spraycv.geometry import ConeMeasurement, MeasureHints
from spraycv.io.exposure import bright_level, brightness_span
from spraycv.measure import Measurer, saw_nothing
from spraycv.redact import redact_credentials
from spraycv.refine.stage import Refiner
from spraycv.runtime.predictor import Predictor, Segmentation
from spraycv.stream.alarms import AlarmMonitor
from spraycv.stream.exposure_watch import ExposureWatch
from spraycv.stream.idle import IdleSources
from spraycv.stream.metrics import Metrics
from spraycv.stream.reader import Frame, SourceReader, SourceState
from spraycv.stream.records import Event, EventKind, FrameRecord, NozzleRecord, SpecStatus
from spraycv.stream.store import StoreWriter
from spraycv.stream.tracking import NozzleReading, NozzleTracker
from spraycv.viz.overlay import draw_overlay

log = logging.getLogger("spraycv.stream.worker")
# Events an operator must act on are logged as warnings, the others as information.
WARNING_EVENTS = frozenset(
    {EventKind.ALARM_RAISED, EventKind.SOURCE_LOST, EventKind.UNDER_EXPOSED, EventKind.FLAT_FRAMES}
)


@dataclass(frozen=True)
class Latest:
    """The newest measured frame of a source, kept for the API and the dashboard."""

    frame: Frame
    mask: np.ndarray  # (H, W) uint8 {0, 1}
    measurements: list[ConeMeasurement]  # .index is the nozzle id (-1: not placed)
    record: FrameRecord

    def annotated(self) -> np.ndarray:
        """(H, W, 3) uint8 BGR overlay with nozzle ids and angles."""
        return draw_overlay(self.frame.image, self.mask, self.measurements)


class InferenceWorker(threading.Thread):
    """Takes the newest frame of each due source, runs the model on them as one batch.

    Geometry, tracking and storing run on a second thread fed through a short queue, so
    that the model (which releases the GIL) and the geometry of the previous batch overlap.
    """

    def __init__(
        self,
        config: DaemonConfig,
        readers: dict[str, SourceReader],
        wake: threading.Condition,
        predictor: Predictor,
        writer: StoreWriter,
        metrics: Metrics,
        refiner: Refiner | None = None,
    ):
        super().__init__(name="inference", daemon=True)
        self.refiner = refiner
        self.config, self.readers, self.wake = config, readers, wake
        self.predictor, self.writer, self.metrics = predictor, writer, metrics
        self.sources: dict[str, SourceConfig] = {s.name: s for s in config.sources}
        self.trackers = {name: NozzleTracker(config.tracking) for name in readers}
        self.alarms = AlarmMonitor(config.alarms)
        self.exposure = ExposureWatch()
        self.idle = IdleSources(config.inference.idle_search_every_s)  # the measure thread's
        self.latest: dict[str, Latest] = {}
        self._latest_lock = threading.Lock()
        self._next_due = dict.fromkeys(readers, 0.0)
        self._stop_event = threading.Event()
        self._rotate = 0
        self._masks: queue.Queue[tuple[list[Frame], list[Segmentation | None]] | None]
        self._masks = queue.Queue(maxsize=2)  # back-pressure: readers drop, not this queue
        self._measurer = threading.Thread(target=self._measure_loop, name="measure", daemon=True)
        self.model_name = predictor.name.split(" (")[0]
        self.backend = predictor.backend

    def stop(self) -> None:
        """Finish the batch in flight, then exit."""
        self._stop_event.set()
        with self.wake:
            self.wake.notify_all()

    def get_latest(self, source: str) -> Latest | None:
        with self._latest_lock:
            return self.latest.get(source)

    def run(self) -> None:
        self._measurer.start()
        try:
            while not self._stop_event.is_set():
                self._watch_sources()
                frames = self._take_due()
                if not frames:
                    with self.wake:
                        self.wake.wait(0.05)
                    continue
                self._infer(frames)
        finally:  # the measure thread drains what was inferred, then stops
            self._masks.put(None)
            self._measurer.join()

    def _measure_loop(self) -> None:
        while (item := self._masks.get()) is not None:
            for frame, seg in zip(*item, strict=True):
                if seg is None:
                    continue
                try:
                    self._measure_and_store(frame, seg)
                except Exception as exc:  # one bad frame must not stop the other sources
                    self.metrics.inc("frames_failed_total", labels={"source": frame.source})
                    log.exception("frame failed", extra={"source": frame.source, "error": str(exc)})

    # -- scheduling ------------------------------------------------------------------------
    def _take_due(self) -> list[Frame]:
        """Newest frames of the sources whose frame-rate cap allows one now (round-robin)."""
        names = list(self.readers)
        if not names:
            return []
        self._rotate = (self._rotate + 1) % len(names)
        now = time.monotonic()
        frames: list[Frame] = []
        for name in names[self._rotate :] + names[: self._rotate]:
            if len(frames) >= self.config.inference.max_batch:
                break
            if now < self._next_due[name]:
                continue
            frame = self.readers[name].take()
            if frame is not None:
                frames.append(frame)
                self._next_due[name] = now + 1.0 / self.sources[name].max_fps
        return frames

    def _watch_sources(self) -> None:
        """Turn reader state changes into events an operator sees (each change, however
        brief: `SourceReader.state_changes`)."""
        for name, reader in self.readers.items():
            for change in reader.state_changes():
                if change.after is SourceState.CONNECTED:
                    shown = f"stream up: {redact_credentials(reader.config.url)}"
                    kind = EventKind.SOURCE_CONNECTED
                elif change.before is SourceState.CONNECTED:
                    shown, kind = change.reason or str(change.after), EventKind.SOURCE_LOST
                else:
                    continue
                self._emit(Event(change.time, name, kind, message=shown))

    # -- inference -------------------------------------------------------------------------
    def _infer(self, frames: list[Frame]) -> None:
        started = time.perf_counter()
        segs = self._predict(frames)
        self.metrics.observe("inference_seconds", time.perf_counter() - started)
        self._masks.put((frames, segs))

    def _predict(self, frames: Sequence[Frame]) -> list[Segmentation | None]:
        try:
            return list(self.predictor.segment([f.image for f in frames]))
        except Exception:
            if len(frames) == 1:
                frame = frames[0]
                self.metrics.inc("frames_failed_total", labels={"source": frame.source})
                log.exception("inference failed", extra={"source": frame.source})
                return [None]
        return [self._predict([f])[0] for f in frames]  # isolate the frame that failed

    def _measure_and_store(self, frame: Frame, seg: Segmentation) -> None:
        source = self.sources[frame.source]
        mask = seg.mask
        hints = MeasureHints(
            mm_per_px=source.mm_per_px,
            nozzle_height_mm=source.nozzle_height_mm,
            nozzle_spacing_mm=source.nozzle_spacing_mm,
        )
        search = self.idle.search_due(frame.source, frame.time)
        measurer = Measurer(
            self.predictor, hints, self.config.geometry, self.refiner,
            search_when_nothing_seen=search,
        )  # fmt: skip
        head = self.predictor.has_apex_head
        apexes, strength = (seg.apexes, seg.apex_strength) if head else (None, None)
        reading = measurer.read_segmented(frame.image, mask, apexes, strength)
        found = any(m.reliable for m in reading.measurements)
        self.idle.update(frame.source, frame.time, search, found)
        mask, measurements = reading.mask, reading.measurements
        ids = self.trackers[frame.source].assign([m.apex for m in measurements], frame.time)
        nozzles: list[NozzleRecord] = []
        alarms: list[tuple[int, float | None, EventKind]] = []
        for m, nozzle_id in zip(measurements, ids, strict=True):
            record, transition = self._nozzle_record(frame, m, nozzle_id)
            nozzles.append(record)
            if transition is not None and nozzle_id is not None:
                alarms.append((nozzle_id, record.smoothed_angle_deg, transition))
        latency = time.time() - frame.time
        record = FrameRecord(
            frame.time, frame.source, frame.number, frame.image.shape[1], frame.image.shape[0],
            latency, nozzles,
        )  # fmt: skip
        # The count of inferred frames and the hand-over to the store move together.
        self.writer.put(record)
        self.metrics.inc("frames_inferred_total", labels={"source": frame.source})
        self.metrics.observe("frame_latency_seconds", latency, labels={"source": frame.source})
        numbered = [
            dataclasses.replace(m, index=-1 if i is None else i)
            for m, i in zip(measurements, ids, strict=True)
        ]
        latest = Latest(frame, mask, numbered, record)
        with self._latest_lock:
            self.latest[frame.source] = latest
        for nozzle_id, angle, kind in alarms:
            self._alarm(latest, nozzle_id, angle, kind)
        self._watch_exposure(frame, saw_nothing(reading))

    def _watch_exposure(self, frame: Frame, nothing_seen: bool) -> None:
        level = bright_level(frame.image)
        # a frame that read anything is not flat (flat frames never reach the network): the
        # span (about 1 ms a frame) is taken only where nothing was seen
        span = brightness_span(frame.image) if nothing_seen else None
        change = self.exposure.update(frame.source, level, span)
        if change is not None and level is not None:
            message = ExposureWatch.message(change, level)
            self._emit(Event(frame.time, frame.source, change, message=message))

    def _nozzle_record(
        self, frame: Frame, m: ConeMeasurement, nozzle_id: int | None
    ) -> tuple[NozzleRecord, EventKind | None]:
        """One plume's record (tracked, smoothed, checked against its spec) and the alarm it
        raised or cleared, if any. A plume without a nozzle id is recorded, not checked."""
        reading: NozzleReading | None = None
        status, transition = SpecStatus.NOT_MEASURED, None
        if nozzle_id is not None:
            reading = self.trackers[frame.source].observe(nozzle_id, m)
            rule = self.sources[frame.source].rule_for(nozzle_id, self.config.spec)
            status, transition = self.alarms.update(
                frame.source, nozzle_id, reading.angle_deg, rule, m.unreliable
            )
        record = NozzleRecord.from_measurement(
            m, time=frame.time, source=frame.source, frame_no=frame.number,
            nozzle_id=nozzle_id, smoothed=None if reading is None else reading.angle_deg,
            spec_status=status, model=self.model_name, backend=self.backend,
            spread=None if reading is None else reading.spread_dict(),
        )  # fmt: skip
        return record, transition

    def _alarm(self, latest: Latest, nozzle_id: int, angle: float | None, kind: EventKind) -> None:
        rule = self.sources[latest.frame.source].rule_for(nozzle_id, self.config.spec)
        spec = f"{rule.nominal_deg:g} +- {rule.tolerance_deg:g} deg" if rule else "no spec"
        shown = f"{angle:.1f} deg" if angle is not None else "not measured"
        snapshot = self._snapshot(latest, nozzle_id) if kind is EventKind.ALARM_RAISED else None
        message = f"nozzle {nozzle_id}: {shown} (spec {spec})"
        event = Event(latest.frame.time, latest.frame.source, kind, nozzle_id, angle, message,
                      snapshot)  # fmt: skip
        self._emit(event)

    def _snapshot(self, latest: Latest, nozzle_id: int) -> str | None:
        folder = self.config.alarms.snapshot_dir
        if folder is None:
            return None
        path = Path(folder) / f"{latest.frame.source}_n{nozzle_id}_{latest.frame.time:.3f}.jpg"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not cv2.imwrite(str(path), latest.annotated()):
                raise OSError("cv2.imwrite returned False")
        except OSError as exc:
            log.error("alarm snapshot not saved", extra={"path": str(path), "error": str(exc)})
            return None
        return str(path)

    def _emit(self, event: Event) -> None:
        self.writer.put(event)
        self.metrics.inc("events_total", labels={"kind": event.kind.value})
        level = logging.WARNING if event.kind in WARNING_EVENTS else logging.INFO
        log.log(level, event.kind.value, extra={"source": event.source, "detail": event.message})
