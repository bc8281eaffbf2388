"""A video file served as a live MJPEG-over-HTTP camera by ffmpeg (tests and benchmarks).

ffmpeg's HTTP muxer in listen mode serves one client per process; the process ends when
the client goes away, so `ensure_running()` restarts it, like a camera that comes back.

ffmpeg cannot listen on port 0 (it refuses a URL without a port), so the first start takes
a port that is free at that moment; if another process takes it before ffmpeg binds it,
ffmpeg says "Address already in use" and the start tries again on another port. A restart
keeps its port: the client's URL names it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from listening import ESTABLISHED, LISTEN, tcp_ports

PORT_TRIES = 5  # first starts on a port another process took in between


def lavfi_video(path: Path, source: str, seconds: float = 1.0) -> Path:
    """A short MJPEG video of an ffmpeg test source (e.g. "testsrc=size=64x48:rate=12")."""
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", source, "-t", str(seconds),
         "-c:v", "mjpeg", str(path)],
        check=True,
    )  # fmt: skip
    return path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (only for servers that cannot bind port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PortTaken(RuntimeError):
    """ffmpeg could not bind its port: another process holds it."""


class FfmpegMjpegServer:
    """`ffmpeg -re -stream_loop -1 -i VIDEO ... -f mpjpeg -listen 1 http://127.0.0.1:PORT/`."""

    def __init__(
        self,
        video: Path,
        port: int | None = None,  # None: a free one, chosen again if taken at the first start
        fps: float | None = None,
        size: tuple[int, int] | None = None,  # (W, H) to rescale to
        quality: int = 5,  # ffmpeg -q:v, 2 (best) .. 31
    ):
        if shutil.which("ffmpeg") is None:
            raise RuntimeError("ffmpeg not found: install the Debian package ffmpeg")
        if not Path(video).is_file():
            raise FileNotFoundError(f"video not found: {video}")
        self.video, self.fps, self.size, self.quality = Path(video), fps, size, quality
        self._port_chosen_here = port is None
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/stream.mjpg"

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
        """Start ffmpeg and wait until its port listens; a first start on a port chosen here
        moves to another port when that one was taken meanwhile."""
        may_move = self._port_chosen_here and self.starts == 0
        for _ in range(PORT_TRIES if may_move else 1):
            try:
                return self._start_once(wait_s)
            except PortTaken:
                if not may_move:
                    raise
                self.port = free_port()
        raise PortTaken(f"no free port for ffmpeg after {PORT_TRIES} tries")

    def _start_once(self, wait_s: float) -> FfmpegMjpegServer:
        """Start ffmpeg and wait until its port accepts connections, without connecting.

        A probe connection would be the one client ffmpeg serves, so readiness is taken from
        ffmpeg's own sockets in /proc instead (Linux).
        """
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                taken = "Address already in use" in err
                raise (PortTaken if taken else RuntimeError)(f"ffmpeg exited: {err.strip()}")
            # a waiting reader can connect within milliseconds, and ffmpeg then closes its
            # listening socket: serving that client counts as listening
            if self.port in tcp_ports(self.process.pid, (LISTEN, ESTABLISHED)):
                self.starts += 1
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
