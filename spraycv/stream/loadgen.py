"""Load on the daemon's HTTP API from many loopback clients (tests and benchmarks).

Linux routes all of 127.0.0.0/8 to the loopback, so sockets bound to 127.0.1.1, 127.0.1.2,
... are distinct clients to the API's per-client connection limit. Everything here is
bounded: a fixed number of sockets and requests, each request with its own deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from spraycv.geometry import ConeMeasurement
from spraycv.stream.api import connection_budget
from spraycv.stream.records import FrameRecord, NozzleRecord, SpecStatus
from spraycv.stream.store import StoreWriter

IDLE_CLIENTS_NET = 1  # idle sockets come from 127.0.1.x
REQUEST_CLIENTS_NET = 2  # requests from 127.0.2.x
# half the idle sockets send the start of a request and never finish it (slowloris)
PARTIAL_REQUEST = b"GET /measurements HTTP/1.1\r\nHost: spraycv\r\n"


def client_address(net: int, index: int) -> str:
    return f"127.0.{net}.{index + 1}"


@dataclass(frozen=True)
class Outcome:
    """One request: the HTTP status (None: closed or reset with no answer), its time."""

    status: int | None
    seconds: float
    body_bytes: int = 0
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.status == 200

    @property
    def refused(self) -> bool:
        """A 503, or the connection closed or reset before an answer: not a hang."""
        return self.status == 503 or (self.status is None and self.error != "timeout")


async def _get(host: str, port: int, path: str, source: str, timeout: float) -> Outcome:
    started = time.monotonic()
    try:
        data = await asyncio.wait_for(_exchange(host, port, path, source), timeout)
    except asyncio.TimeoutError:
        return Outcome(None, time.monotonic() - started, error="timeout")
    except OSError as exc:
        return Outcome(None, time.monotonic() - started, error=type(exc).__name__)
    seconds = time.monotonic() - started
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        return Outcome(None, seconds, error="closed")
    return Outcome(int(parts[1]), seconds, len(body))


async def _exchange(host: str, port: int, path: str, source: str) -> bytes:
    reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        return await reader.read()  # to the end: the server closes after the answer
    finally:
        writer.close()


def burst(
    host: str, port: int, path: str, count: int, clients: int, timeout: float = 5.0
) -> list[Outcome]:
    """`count` GET requests at once from `clients` addresses; each gets `timeout` seconds."""

    async def run() -> list[Outcome]:
        sources = [client_address(REQUEST_CLIENTS_NET, i % clients) for i in range(count)]
        return list(await asyncio.gather(*(_get(host, port, path, s, timeout) for s in sources)))

    return asyncio.run(run())


@contextlib.contextmanager
def idle_connections(
    host: str, port: int, count: int, clients: int
) -> Iterator[list[socket.socket]]:
    """`count` connections from `clients` addresses that never complete a request."""
    connection_budget(count + 1024)  # this process's open-file limit, for the sockets
    sockets: list[socket.socket] = []
    try:
        for i in range(count):
            address = (client_address(IDLE_CLIENTS_NET, i % clients), 0)
            sock = socket.create_connection((host, port), timeout=5, source_address=address)
            sock.settimeout(None)  # blocking: MSG_DONTWAIT then answers at once (still_open)
            sockets.append(sock)
            if i % 2:
                with contextlib.suppress(OSError):  # the server may have refused it already
                    sock.sendall(PARTIAL_REQUEST)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def still_open(sock: socket.socket) -> bool:
    """Whether the server still holds this connection (no close, no 503 sent on it)."""
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, TimeoutError):  # nothing to read, and not closed
        return True
    except OSError:
        return False
    return False  # b"" (closed) or the first byte of a refusal


def thread_count(pid: int) -> int:
    """Threads of a process (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise RuntimeError(f"no thread count for process {pid}")


class ThreadPeak(threading.Thread):
    """A process's thread count while this ran (sampled every 20 ms): the peak and the median.

    The median is what a thread per connection would raise for as long as the connections
    are held; the peak also catches the transient threads that the daemon starts on its own,
    such as FFmpeg's decoder threads while a video source is reopened (about 30 ms).
    """

    def __init__(self, pid: int):
        super().__init__(name="thread-peak", daemon=True)
        self.pid = pid
        self.samples = [thread_count(pid)]
        self._stop_event = threading.Event()

    @property
    def peak(self) -> int:
        return max(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def run(self) -> None:
        while not self._stop_event.wait(0.02):
            with contextlib.suppress(OSError, RuntimeError):  # the process may have ended
                self.samples.append(thread_count(self.pid))

    def __enter__(self) -> ThreadPeak:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop_event.set()
        self.join()


def seed_measurements(path: Path, frames: int, source: str = "archive") -> None:
    """Store `frames` frames of 3 nozzles from the last hour, for queries to return."""
    writer = StoreWriter(path, flush_every_s=0.05)
    writer.start()
    start = time.time() - 3600
    for number in range(frames):
        t = start + number * (3000 / frames)
        nozzles = [_nozzle(t, source, number, nozzle_id) for nozzle_id in range(3)]
        writer.put(FrameRecord(t, source, number, 640, 480, 0.05, nozzles))
    writer.close(timeout=60)


def _nozzle(t: float, source: str, frame_no: int, nozzle_id: int) -> NozzleRecord:
    angle = 55.0 + nozzle_id
    m = ConeMeasurement(
        index=nozzle_id, apex=(100.0 + 200 * nozzle_id, 40.0), tilt_deg=0.0,
        half_angle_left_deg=angle / 2, half_angle_right_deg=angle / 2, included_angle_deg=angle,
        length_px=200.0, area_px=9000.0,
    )  # fmt: skip
    return NozzleRecord.from_measurement(
        m, time=t, source=source, frame_no=frame_no, nozzle_id=nozzle_id, smoothed=angle,
        spec_status=SpecStatus.NO_SPEC, model="seed", backend="none",
    )  # fmt: skip
