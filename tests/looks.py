"""Counting a predictor's extra looks at a frame (the tiled and the quarter-turned ones) while
a test reads it: each look still runs as it would, only its calls are counted."""

from __future__ import annotations

from typing import Any

import pytest

LOOKS = ("tiled_look", "turned_look")


def counted_looks(monkeypatch: pytest.MonkeyPatch, predictor: Any) -> dict[str, int]:
    """Calls of each of `predictor`'s extra looks from now on, by name (a live dict)."""
    calls = dict.fromkeys(LOOKS, 0)
    for name in LOOKS:
        look = getattr(predictor, name)

        def counted(*args: Any, _look=look, _name=name) -> Any:
            calls[_name] += 1
            return _look(*args)

        monkeypatch.setattr(predictor, name, counted)
    return calls
