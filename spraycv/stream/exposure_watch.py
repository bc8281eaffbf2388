"""Whether each camera's frames are too dark to trust: an event when that changes.

In a frame whose brightest pixels stay below `Exposure.dim_below` grey levels the model
misses two nozzles in three (docs/experiments.md, row 77), so "no plume" there says nothing.
The watch raises `under_exposed` once when a source's frames turn that dark and
`exposure_restored` once when they are lit again; a hysteresis band keeps a level hovering
at the threshold from raising one event per frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spraycv.io.exposure import Exposure, under_exposed_text
from spraycv.stream.records import EventKind

RESTORED_FACTOR = 1.25  # lit again at 1.25 x the dark threshold (80 of 255 levels)


@dataclass
class ExposureWatch:
    """Per source: is it under-exposed now? `update` returns the event a change raises."""

    dark_below: float = Exposure().dim_below
    dark: dict[str, bool] = field(default_factory=dict)

    def update(self, source: str, level: float | None) -> EventKind | None:
        """A frame's bright level (`spraycv.io.exposure.bright_level`; None: not known)."""
        if level is None:
            return None
        was = self.dark.get(source, False)
        now = level < (self.dark_below * RESTORED_FACTOR if was else self.dark_below)
        self.dark[source] = now
        if now == was:
            return None
        return EventKind.UNDER_EXPOSED if now else EventKind.EXPOSURE_RESTORED

    @staticmethod
    def message(kind: EventKind, level: float) -> str:
        if kind is EventKind.UNDER_EXPOSED:
            return f"{under_exposed_text(level)}; raise the exposure or gain"
        return f"exposed again: the brightest pixels reach {level:.0f} of 255 grey levels"
