"""Where a test's servers listen: each binds port 0 (or, for ffmpeg, a port it keeps) and
the port is read back from the operating system, so no test picks a free port, releases it
and hopes it is still free when its server binds it.

Linux only: the sockets of a process are found in /proc.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

LISTEN, ESTABLISHED = "0A", "01"  # TCP states as /proc/net/tcp writes them
TCP_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))


def tcp_ports(pid: int, states: tuple[str, ...] = (LISTEN,)) -> set[int]:
    """Local ports of the TCP sockets process `pid` holds in one of `states` (none once the
    process exited)."""
    inodes = _socket_inodes(pid)
    ports: set[int] = set()
    for table in TCP_TABLES:
        with contextlib.suppress(FileNotFoundError):  # no IPv6
            for f in (line.split() for line in table.read_text().splitlines()[1:]):
                if f[3] in states and f[9] in inodes:
                    ports.add(int(f[1].rsplit(":", 1)[1], 16))
    return ports


def listening_port(pid: int) -> int | None:
    """The one port process `pid` listens on (a daemon's API), or None before it listens."""
    ports = tcp_ports(pid)
    assert len(ports) <= 1, f"process {pid} listens on several ports: {sorted(ports)}"
    return next(iter(ports), None)


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    with contextlib.suppress(OSError):  # the process exited
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):  # a descriptor closed meanwhile
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
    return inodes
