"""`spraycv daemon` as a real process: start it on a config, query its API, stop it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from listening import listening_port
from stream_helpers import wait_for


def api(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        body = response.read().decode()
    return body if path == "/metrics" else json.loads(body)


def responds(port: int) -> bool:
    """The API answers and some source streams (/health answers 503 while none does)."""
    try:
        return bool(api(port, "/health")["streaming"])
    except OSError:
        return False


def metric(port: int, name: str) -> float:
    """Sum of a metric's series in the Prometheus text."""
    total = 0.0
    for line in api(port, "/metrics").splitlines():
        if line.startswith(f"spraycv_{name}{{") or line.startswith(f"spraycv_{name} "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def start_daemon(
    tmp_path: Path, url: str, more_sources: list[dict] | None = None, **sections: Any
) -> tuple[subprocess.Popen, int, Path]:
    """The daemon on source "cam" (and `more_sources`); returns (process, API port, log).

    The API binds port 0; its port is read from the process's listening socket.
    """
    source = {"open_timeout_s": 2, "read_timeout_s": 2}
    config = {
        "sources": [{"name": "cam", "url": url, "max_fps": 10, **source}]
        + [{**source, **s} for s in more_sources or []],
        "reconnect": {"initial_s": 0.2, "max_s": 1.0},
        "inference": {"threads": 1},
        "store": {"path": str(tmp_path / "db.sqlite"), "flush_every_s": 0.2},
        "alarms": {"snapshot_dir": str(tmp_path / "alarms")},
        **sections,
    }
    config["api"] = {**config.get("api", {}), "port": 0}
    path = tmp_path / "daemon.yaml"
    path.write_text(yaml.safe_dump(config))
    log = tmp_path / "daemon.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "spraycv", "daemon", "--config", str(path)],
        stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
    )  # fmt: skip
    wait_for(lambda: process.poll() is not None or listening_port(process.pid), 60, "the API")
    assert process.poll() is None, log.read_text()
    port = listening_port(process.pid)
    wait_for(lambda: process.poll() is not None or responds(port), 60, "a source streaming")
    assert process.poll() is None, log.read_text()
    return process, port, log


def stop_daemon(process: subprocess.Popen, sig: int) -> tuple[dict, float]:
    """Send the signal; returns (the summary printed on exit, seconds to exit)."""
    started = time.monotonic()
    process.send_signal(sig)
    out, _ = process.communicate(timeout=30)
    elapsed = time.monotonic() - started
    assert process.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])["stopped"], elapsed


def stop_seconds(log: Path) -> float:
    """The daemon's own stop, from its log: signal received -> everything committed ("daemon
    stopped"). The process exit after it adds the interpreter's teardown (unloading the
    model's libraries), seconds that depend on the machine and its load, not on the daemon."""
    times = {}
    for line in log.read_text().splitlines():
        record = json.loads(line) if line.startswith("{") else {}
        if record.get("msg") in ("signal received", "daemon stopped"):
            times[record["msg"]] = datetime.fromisoformat(record["time"].rstrip("Z"))
    return (times["daemon stopped"] - times["signal received"]).total_seconds()
