"""The ffmpeg test camera: ffmpeg cannot bind port 0, so a first start on a port another
process took in between moves to another port; a port the caller chose is kept."""

from __future__ import annotations

import pytest
from ffmpeg_camera import FfmpegMjpegServer, PortTaken
from listening import LISTEN, tcp_ports
from stream_helpers import SAMPLE_VIDEO


def test_a_first_start_on_a_taken_port_moves_to_a_free_one(refused_port: int) -> None:
    camera = FfmpegMjpegServer(SAMPLE_VIDEO, fps=5)
    camera.port = refused_port  # as if another process took the port found free
    with camera:
        assert camera.port != refused_port
        assert tcp_ports(camera.process.pid, (LISTEN,)) == {camera.port}
        assert camera.url == f"http://127.0.0.1:{camera.port}/stream.mjpg"


def test_a_port_given_is_kept_and_a_taken_one_says_so(refused_port: int) -> None:
    with pytest.raises(PortTaken, match="Address already in use"):
        FfmpegMjpegServer(SAMPLE_VIDEO, port=refused_port).start()
