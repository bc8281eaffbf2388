"""Polling helper shared by the test folders (tests/ is on sys.path through its conftest)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> None:
    """Poll until condition() is truthy; fail the test with `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")
