"""Polling helpers shared by the test folders (tests/ is on sys.path through its conftest).

Tests wait on a condition, never for a fixed time: a loaded machine then only makes them
slower, not fail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], object], timeout: float = 30.0, what: str = "", every: float = 0.05
) -> None:
    """Poll condition() every `every` s until truthy; fail with `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")


def wait_settled(
    read: Callable[[], T],
    timeout: float = 30.0,
    what: str = "",
    every: float = 0.25,
    accept: Callable[[T], object] = lambda value: True,
) -> T:
    """read() once two reads `every` s apart are equal (and accepted): a counter that has
    stopped, a page that has finished redrawing. Fails the test after `timeout` s."""
    reads: list[T] = []

    def settled() -> bool:
        reads[:] = [*reads[-1:], read()]
        return len(reads) == 2 and reads[0] == reads[1] and bool(accept(reads[1]))

    try:
        wait_for(settled, timeout, what, every)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last read: {reads[-1:]!r}") from None
    return reads[-1]
