"""Helpers of the stream tests (a module of its own: `from conftest import` is ambiguous
when several test folders have a conftest)."""

from __future__ import annotations

import time
from collections.abc import Callable

from spraycv.paths import SAMPLES_DIR

SAMPLE_VIDEO = SAMPLES_DIR / "video.mp4"


def wait_for(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> None:
    """Poll until condition() is truthy; fail the test with `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")
