"""Serve a video file as a live MJPEG-over-HTTP camera with ffmpeg (demos, tests, benchmarks).

ffmpeg's HTTP muxer in listen mode serves one client per process; the process ends when
the client goes away, so `ensure_running()` restarts it, like a camera that comes back.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class FfmpegMjpegServer:
    """`ffmpeg -re -stream_loop -1 -i VIDEO ... -f mpjpeg -listen 1 http://127.0.0.1:PORT/`."""

    def __init__(
        self,
        video: Path,
        port: int | None = None,
        fps: float | None = None,
        size: tuple[int, int] | None = None,  # (W, H) to rescale to
        quality: int = 5,  # ffmpeg -q:v, 2 (best) .. 31
    ):
        if shutil.which("ffmpeg") is None:
            raise RuntimeError("ffmpeg not found: install the Debian package ffmpeg")
        if not Path(video).is_file():
            raise FileNotFoundError(f"video not found: {video}")
        self.video, self.fps, self.size, self.quality = Path(video), fps, size, quality
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/stream.mjpg"
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def command(self) -> list[str]:
        filters = []
        if self.fps:
            filters.append(f"fps={self.fps:g}")
        if self.size:
            filters.append(f"scale={self.size[0]}:{self.size[1]}")
        vf = ["-vf", ",".join(filters)] if filters else []
        return [
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin",
            "-re", "-stream_loop", "-1", "-i", str(self.video), *vf,
            "-c:v", "mjpeg", "-q:v", str(self.quality), "-f", "mpjpeg",
            "-listen", "1", self.url,
        ]  # fmt: skip

    def start(self, wait_s: float = 10.0) -> FfmpegMjpegServer:
        """Start ffmpeg and wait until its port accepts connections, without connecting.

        A probe connection would be the one client ffmpeg serves, so readiness is taken from
        the listening socket in /proc instead (Linux), else from a short sleep.
        """
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self.starts += 1
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"ffmpeg exited at start: {err.strip()}")
            if _listening(self.port):
                return self
            time.sleep(0.05)
        raise RuntimeError(f"ffmpeg did not listen on port {self.port} within {wait_s} s")

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ensure_running(self) -> None:
        """Restart ffmpeg if its client left (it serves one client per process)."""
        if not self.running():
            self.start()

    def kill(self) -> None:
        """Stop serving abruptly, as a camera that loses power."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def __enter__(self) -> FfmpegMjpegServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _listening(port: int) -> bool:
    """Whether 127.0.0.1:port listens, or already serves its client (a waiting reader can
    connect within milliseconds, and ffmpeg then closes its listening socket).

    Reads /proc/net/tcp; True after a short sleep where that is not available.
    """
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        time.sleep(0.5)
        return True
    local = f"0100007F:{port:04X}"
    return any(f[1] == local and f[3] in ("0A", "01") for f in (line.split() for line in lines))
