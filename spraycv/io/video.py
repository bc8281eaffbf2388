"""Opening video files, streams and cameras, with the image limits and a check for cut files."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from spraycv.io.images import ImageHeader, ImageReadError, check_header

VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg", ".mjpg")
STREAM_SCHEMES = ("rtsp", "rtsps", "rtmp", "http", "https", "udp", "tcp", "srt")
STREAM_TIMEOUT_MS = 10_000  # opening or reading a stream gives up after this long
FALLBACK_FPS = 10.0  # for overlays of streams that announce no frame rate


class VideoReadError(ValueError):
    """A video file or stream that cannot be opened or read; the message names it."""


def is_url(source: str) -> bool:
    return "://" in source


def is_video(source: str) -> bool:
    """A video file (by suffix), a stream URL or a camera index."""
    return is_url(source) or source.isdigit() or Path(source).suffix.lower() in VIDEO_SUFFIXES


@dataclass
class Video:
    """An open video: its capture, frame rate, frame size and the frame count its container
    announces (0 for streams and cameras, which announce none)."""

    name: str  # in messages: the source, or the name of an upload saved to a temporary file
    capture: cv2.VideoCapture
    fps: float
    width: int
    height: int
    announced: int

    def frames(self, max_frames: int | None = None) -> Iterator[np.ndarray]:
        """(H, W, 3) uint8 BGR frames until the end, a read failure or max_frames."""
        count = 0
        while max_frames is None or count < max_frames:
            ok, frame = self.capture.read()
            if not ok or frame is None:
                return
            count += 1
            yield frame

    def expected(self, max_frames: int | None = None) -> int:
        """Frames a complete read gives: the announced count (capped), 0 when unknown."""
        if max_frames is None or self.announced <= 0:
            return self.announced
        return min(self.announced, max_frames)

    def shortfall(self, read: int, max_frames: int | None = None) -> str | None:
        """Why the video counts as cut short after `read` frames, or None when it is whole."""
        expected = self.expected(max_frames)
        if expected <= 0 or read >= expected:
            return None
        return (
            f"{self.name}: the video is cut short: {read} of the {self.announced} frames "
            "its container announces could be read"
        )

    def release(self) -> None:
        self.capture.release()


def _capture(source: str, name: str) -> cv2.VideoCapture:
    if source.isdigit():
        return cv2.VideoCapture(int(source))
    if is_url(source):
        scheme = source.split("://", 1)[0].lower()
        if scheme not in STREAM_SCHEMES:
            raise VideoReadError(
                f"{name}: URL scheme {scheme!r} is not read (streams: {', '.join(STREAM_SCHEMES)})"
            )
        timeouts = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, STREAM_TIMEOUT_MS]
        timeouts += [cv2.CAP_PROP_READ_TIMEOUT_MSEC, STREAM_TIMEOUT_MS]
        return cv2.VideoCapture(source, cv2.CAP_FFMPEG, timeouts)
    path = Path(source)
    if not path.exists():
        raise VideoReadError(f"{name}: no such file")
    if path.is_file() and path.stat().st_size == 0:  # not a device such as /dev/video0
        raise VideoReadError(f"{name}: file is empty")
    return cv2.VideoCapture(source, cv2.CAP_FFMPEG)


def open_video(source: str, max_pixels: int | None = None, name: str | None = None) -> Video:
    """Open a video file, stream URL or camera index, and check its frame size against the
    image limits before a frame is decoded; VideoReadError says why it cannot be used.

    name: how messages call it (default: the source).
    """
    name = name or source
    capture = _capture(source, name)
    if not capture.isOpened():
        capture.release()
        why = (
            "cannot open the stream (refused, unreachable or not a video)"
            if is_url(source)
            else "not a readable video (corrupt, audio only or an unknown codec)"
        )
        raise VideoReadError(f"{name}: {why}")
    width = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH))
    height = int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
    try:
        if width > 0 and height > 0:  # cameras may tell only once a frame is read
            check_header(ImageHeader("video", width, height, "RGB"), name, max_pixels)
    except ImageReadError as exc:
        capture.release()
        raise VideoReadError(str(exc)) from None
    fps = capture.get(cv2.CAP_PROP_FPS) or FALLBACK_FPS
    announced = max(int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0), 0)
    return Video(name, capture, fps, width, height, announced)
