"""One reader thread per camera: keeps only the newest frame, reopens with backoff on failure."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from spraycv.config.daemon import ReconnectConfig, SourceConfig
from spraycv.geometry.types import ValueEnum
from spraycv.io.video import VIDEO_SUFFIXES
from spraycv.redact import redact_credentials

log = logging.getLogger("spraycv.stream.reader")

MAX_BAD_READS = 5  # consecutive failed reads before the connection counts as lost
MAX_STATE_CHANGES = 1000  # kept until the worker takes them (it does so between batches)


class SourceState(ValueEnum):
    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    FAILED = "failed"  # many attempts in a row failed; the reader still keeps trying
    STOPPED = "stopped"


@dataclass(frozen=True)
class StateChange:
    """A source's state moving from `before` to `after` at `time` (time.time()), and why."""

    time: float
    before: SourceState
    after: SourceState
    reason: str | None


@dataclass(frozen=True)
class Frame:
    """A frame as read: (H, W, 3) uint8 BGR image, its per-source number and capture time."""

    source: str
    number: int
    time: float  # time.time() when it was read
    image: np.ndarray


def _capture_target(url: str) -> tuple[str | int, int]:
    """(what cv2.VideoCapture opens, API preference) for a URL, a file or a USB camera."""
    if url.isdigit():
        return int(url), cv2.CAP_ANY
    if url.startswith("/dev/video"):
        return url, cv2.CAP_V4L2
    return url, cv2.CAP_FFMPEG


def is_video_file(url: str) -> bool:
    return "://" not in url and Path(url).suffix.lower() in VIDEO_SUFFIXES


def check_frame(image: np.ndarray | None) -> str | None:
    """Why a decoded frame cannot be used, or None when it can."""
    if image is None:
        return "no image"
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        return f"expected (H, W, 3) uint8, got {image.dtype} {image.shape}"
    if min(image.shape[:2]) < 16:
        return f"frame too small: {image.shape[1]}x{image.shape[0]}"
    return None


class SourceReader(threading.Thread):
    """Reads one source into a one-frame slot; `take()` hands out the newest unseen frame.

    Latency over completeness: a frame not taken before the next one arrives is dropped
    (and counted). A read failure closes the capture and reopens it after an exponential
    backoff; a new resolution after a reconnect is simply passed on.
    """

    def __init__(
        self,
        config: SourceConfig,
        reconnect: ReconnectConfig,
        on_frame: threading.Condition | None = None,
    ):
        super().__init__(name=f"reader-{config.name}", daemon=True)
        self.config = config
        self.reconnect = reconnect
        self._wake = on_frame  # notified on each new frame, so the worker need not poll
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._slot: Frame | None = None
        self._taken = True
        self.state = SourceState.CONNECTING
        self.last_error: str | None = None
        self.size: tuple[int, int] | None = None  # (W, H) of the latest frame
        self.frames_read = 0
        self.frames_dropped = 0
        self.frames_bad = 0
        self.reconnects = 0
        self._failures = 0
        self._number = 0
        self._ever_connected = False
        # every change since the last state_changes() (bounded: nobody may be draining them)
        self._changes: deque[StateChange] = deque(maxlen=MAX_STATE_CHANGES)

    # -- consumer side -------------------------------------------------------------------
    def take(self) -> Frame | None:
        """The newest frame not yet taken, or None."""
        with self._lock:
            if self._taken or self._slot is None:
                return None
            self._taken = True
            return self._slot

    def state_changes(self) -> list[StateChange]:
        """Every state change since the last call, oldest first. A watcher that polls
        `state` misses a drop shorter than its polling gap (a camera back within one long
        inference); this list does not."""
        with self._lock:
            changes = list(self._changes)
            self._changes.clear()
        return changes

    def has_new(self) -> bool:
        with self._lock:
            return not self._taken and self._slot is not None

    def stop(self) -> None:
        self._stop_event.set()

    def status(self) -> dict[str, object]:
        return {
            "name": self.config.name,
            "url": redact_credentials(self.config.url),
            "state": str(self.state),
            "size": list(self.size) if self.size else None,
            "frames_read": self.frames_read,
            "frames_dropped": self.frames_dropped,
            "frames_bad": self.frames_bad,
            "reconnects": self.reconnects,
            "last_error": self.last_error,
        }

    # -- reader thread ---------------------------------------------------------------------
    def run(self) -> None:
        while not self._stop_event.is_set():
            cap = self._open()
            if cap is None:
                self._backoff()
                continue
            self._read_until_failure(cap)
            cap.release()
            if not self._stop_event.is_set():
                self._backoff()
        self._set_state(SourceState.STOPPED, self.last_error)

    def _open(self) -> cv2.VideoCapture | None:
        target, api = _capture_target(self.config.url)
        params = [
            cv2.CAP_PROP_OPEN_TIMEOUT_MSEC,
            int(self.config.open_timeout_s * 1000),
            cv2.CAP_PROP_READ_TIMEOUT_MSEC,
            int(self.config.read_timeout_s * 1000),
        ]
        try:
            cap = cv2.VideoCapture(target, api, params)
        except cv2.error as exc:
            self._fail(f"cannot open: {exc}")
            return None
        if not cap.isOpened():
            cap.release()
            self._fail("cannot open (unreachable, refused, or not a video)")
            return None
        return cap

    def _read_until_failure(self, cap: cv2.VideoCapture) -> None:
        looping = is_video_file(self.config.url) and self.config.loop
        # files are paced at their own frame rate, as a camera would deliver them
        period = 1.0 / (cap.get(cv2.CAP_PROP_FPS) or 10.0) if is_video_file(self.config.url) else 0
        next_due = time.monotonic()
        failed_reads = 0
        while not self._stop_event.is_set():
            started = time.monotonic()
            ok, image = cap.read()
            problem = check_frame(image) if ok else "the frame could not be decoded"
            if problem is None:
                if failed_reads:  # the stream went on: those were corrupt frames, not a loss
                    self.frames_bad += failed_reads
                    log.warning(
                        "corrupt frame(s) skipped",
                        extra={"source": self.config.name, "count": failed_reads},
                    )
                failed_reads = 0
                self._publish(image)
            elif not ok and looping and self.frames_read and cap.set(cv2.CAP_PROP_POS_FRAMES, 0):
                continue
            else:
                # One undecodable frame on a live connection is a corrupt frame; a run of
                # them, or a read that waited out the timeout, is a lost stream.
                failed_reads += 1
                timed_out = time.monotonic() - started >= 0.9 * self.config.read_timeout_s
                if timed_out or failed_reads >= MAX_BAD_READS:
                    self._fail("stream ended or read timed out" if not ok else problem)
                    return
                continue
            if period:
                next_due += period
                self._stop_event.wait(max(0.0, next_due - time.monotonic()))
                next_due = max(next_due, time.monotonic() - period)

    def _publish(self, image: np.ndarray) -> None:
        size = (image.shape[1], image.shape[0])
        if self.state is not SourceState.CONNECTED:
            if self._ever_connected:
                self.reconnects += 1
            self._ever_connected = True
            log.info("source connected", extra={"source": self.config.name, "size": size})
            self._failures, self.last_error = 0, None
            self._set_state(SourceState.CONNECTED, None)
        if self.size is not None and size != self.size:
            log.info("resolution changed", extra={"source": self.config.name, "size": size})
        self.size = size
        self._number += 1
        frame = Frame(self.config.name, self._number, time.time(), image)
        with self._lock:
            if not self._taken:
                self.frames_dropped += 1
            self._slot, self._taken = frame, False
            self.frames_read += 1
        if self._wake is not None:
            with self._wake:
                self._wake.notify_all()

    def _fail(self, reason: str) -> None:
        self._failures += 1
        # shown by the API, the logs and the source_lost event: OpenCV's errors may quote the URL
        reason = redact_credentials(reason)
        self.last_error = reason
        failed = self._failures >= self.reconnect.failed_after
        new_state = SourceState.FAILED if failed else SourceState.RECONNECTING
        if new_state is not self.state:
            log.warning(
                "source %s", new_state, extra={"source": self.config.name, "reason": reason}
            )
        self._set_state(new_state, reason)

    def _set_state(self, state: SourceState, reason: str | None) -> None:
        if state is self.state:
            return
        with self._lock:
            self._changes.append(StateChange(time.time(), self.state, state, reason))
        self.state = state

    def _backoff(self) -> None:
        r = self.reconnect
        delay = min(r.max_s, r.initial_s * r.factor ** max(0, self._failures - 1))
        self._stop_event.wait(delay)
