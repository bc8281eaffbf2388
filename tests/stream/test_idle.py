"""Idle sources skip the tiled look on frames that show nothing, but for one frame every
`every_s` seconds (spraycv.stream.idle; experiments row 164)."""

from __future__ import annotations

import pytest

from spraycv.stream.idle import IdleSources

# (every_s, frames: (time, found a trusted plume), expected search_due before each frame)
CASES = [
    # nothing found: the first frame looks, the next 9.9 s do not, then one looks again
    (
        10.0,
        [(0.0, False), (5.0, False), (9.9, False), (10.0, False), (15.0, False)],
        [True, False, False, True, False],
    ),
    # a plume ends the idle spell: the next frame that finds nothing looks everywhere
    (10.0, [(0.0, False), (2.0, True), (3.0, False), (4.0, False)], [True, False, True, False]),
    # 0: never idle
    (0.0, [(0.0, False), (0.1, False), (0.2, False)], [True, True, True]),
]


@pytest.mark.parametrize(("every_s", "frames", "expected"), CASES)
def test_an_idle_source_looks_again_every_so_often(every_s, frames, expected) -> None:
    idle = IdleSources(every_s)
    due = []
    for time, found in frames:
        due.append(idle.search_due("cam", time))
        idle.update("cam", time, due[-1], found)
    assert due == expected


def test_sources_are_idle_each_on_its_own() -> None:
    idle = IdleSources(10.0)
    idle.update("a", 0.0, searched=True, found=False)
    assert not idle.search_due("a", 1.0) and idle.search_due("b", 1.0)
    # a frame that could not look everywhere and found nothing does not renew the spell
    idle.update("a", 5.0, searched=False, found=False)
    assert idle.search_due("a", 10.0)
