"""A camera reader on a real MJPEG stream over 127.0.0.1: its state changes are all kept."""

from __future__ import annotations

import cv2
import numpy as np
from mjpeg_server import MjpegServer
from stream_helpers import wait_for

from spraycv.config.daemon import ReconnectConfig, SourceConfig
from spraycv.stream.reader import SourceReader, SourceState


def jpeg(shape: tuple[int, int]) -> bytes:
    return cv2.imencode(".jpg", np.full((*shape, 3), 90, np.uint8))[1].tobytes()


def test_a_drop_shorter_than_any_poll_is_still_recorded() -> None:
    """Nobody looks at `state` while the camera reboots; `state_changes` still tells the
    drop and the reconnection, in order (a watcher polling `state` between two long
    inferences would have seen `connected` twice and said nothing)."""
    server = MjpegServer(lambda i: jpeg((120, 160)), fps=20)
    reader = SourceReader(
        SourceConfig(name="cam", url=server.url, open_timeout_s=2, read_timeout_s=2),
        ReconnectConfig(initial_s=0.05, max_s=0.2, failed_after=3),
    )
    reader.start()
    try:
        wait_for(lambda: reader.size == (160, 120), what="160x120 frames")
        server.restart(lambda i: jpeg((60, 80)))
        wait_for(lambda: reader.size == (80, 60), what="80x60 frames after the reboot")
    finally:
        reader.stop()
        server.close()
        reader.join(timeout=10)
    changes = [(c.before, c.after) for c in reader.state_changes()]
    assert changes[:3] == [
        (SourceState.CONNECTING, SourceState.CONNECTED),
        (SourceState.CONNECTED, SourceState.RECONNECTING),
        (SourceState.RECONNECTING, SourceState.CONNECTED),
    ]
    assert changes[-1][1] is SourceState.STOPPED
    assert reader.state_changes() == []  # drained
    assert reader.reconnects >= 1
