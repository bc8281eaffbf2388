"""Start the dashboard as a Streamlit server process, and the headless Chromium flags to view it.

Used by the browser test and scripts/dashboard_screenshot.py; operators run the
`streamlit run` command printed by `dashboard_command` themselves.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from spraycv.dashboard.settings import load_settings
from spraycv.paths import REPO_ROOT

HOME = REPO_ROOT / "app" / "Home.py"
CHROMIUM = Path("/usr/bin/chromium")  # Debian's package: nothing is downloaded at run time
# Headless, and nothing that phones home (the machines have no internet access).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def dashboard_command(port: int, env: Mapping[str, str] | None = None) -> list[str]:
    """`streamlit run app/Home.py` for the environment the dashboard will have (`env`, else
    this process's): Streamlit refuses uploads over the dashboard's limit (whole MB) before
    they reach the page, which then checks the exact byte count."""
    max_upload_mb = math.ceil(load_settings(env).max_upload_mb)
    return [
        sys.executable, "-m", "streamlit", "run", str(HOME),
        "--server.fileWatcherType", "none", "--server.headless", "true",
        "--server.address", "127.0.0.1", "--server.port", str(port),
        "--server.maxUploadSize", str(max_upload_mb),
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip


def start_dashboard(
    log: Path, env: Mapping[str, str] | None = None, port: int = 0
) -> subprocess.Popen:
    """Start `streamlit run app/Home.py` on 127.0.0.1:port, its output to `log`.

    port 0: a port the system picks when Streamlit binds it (no other process can take it
    in between); wait_until_up reads it from the log.
    """
    full_env = {**os.environ, **(env or {})}
    return subprocess.Popen(
        dashboard_command(port, full_env),
        cwd=REPO_ROOT,
        env=full_env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


# What Streamlit prints once it listens on the --server.address given (the bound port).
_LISTENING = re.compile(r"URL: (http://127\.0\.0\.1:\d+)")


def logged_url(log: Path) -> str | None:
    """The dashboard's address once Streamlit has printed it, else None."""
    match = _LISTENING.search(log.read_text(errors="replace")) if log.is_file() else None
    return match[1] if match else None


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def wait_until_up(process: subprocess.Popen, log: Path, timeout: float = 60.0) -> str:
    """The dashboard's URL once its health endpoint answers; RuntimeError if the process
    exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the dashboard exited with code {process.returncode}: see {log}")
        url = logged_url(log)
        if url is not None and _healthy(url):
            return url
        time.sleep(0.25)
    raise RuntimeError(f"the dashboard did not answer within {timeout:g} s: see {log}")


def stop(process: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM, then SIGKILL if it does not exit (the embedded daemon commits on exit)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
