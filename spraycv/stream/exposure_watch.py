"""Whether each camera's frames are too dark, or too flat, to trust: an event when that
changes.

In a frame whose brightest pixels stay below `Exposure.dim_below` grey levels the model
misses two nozzles in three (docs/experiments.md, row 77), so "no plume" there says nothing;
on a flat frame (a covered lens, a saturated sensor: `spraycv.io.exposure.is_blank`) nothing
can be seen at all. The watch raises `under_exposed` or `flat_frames` once when a source's
frames turn so, and `exposure_restored` once when they show a scene again; hysteresis bands
keep a level hovering at a threshold from raising one event per frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from spraycv.io.exposure import BLANK_SPAN, Exposure, flat_text, under_exposed_text
from spraycv.stream.records import EventKind

RESTORED_FACTOR = 1.25  # lit again at 1.25 x the dark threshold (80 of 255 levels)
UNFLAT_FACTOR = 2.0  # a scene again at twice the flat span (16 grey levels)

View = Literal["lit", "dark", "flat"]
EVENT_OF: dict[View, EventKind] = {
    "dark": EventKind.UNDER_EXPOSED,
    "flat": EventKind.FLAT_FRAMES,
    "lit": EventKind.EXPOSURE_RESTORED,
}


@dataclass
class ExposureWatch:
    """Per source: what do its frames show now? `update` returns the event a change raises."""

    dark_below: float = Exposure().dim_below
    flat_below: float = BLANK_SPAN
    view: dict[str, View] = field(default_factory=dict)

    def update(
        self, source: str, level: float | None, span: float | None = None
    ) -> EventKind | None:
        """A frame's bright level (`spraycv.io.exposure.bright_level`) and brightness span
        (`brightness_span`); None: not known. A dark frame is dark before it is flat (a
        black frame: the exposure is the advice)."""
        if level is None:
            return None
        was = self.view.get(source, "lit")
        dark = level < self.dark_below * (RESTORED_FACTOR if was == "dark" else 1.0)
        flat = span is not None and span < self.flat_below * (
            UNFLAT_FACTOR if was == "flat" else 1.0
        )
        now: View = "dark" if dark else "flat" if flat else "lit"
        self.view[source] = now
        return None if now == was else EVENT_OF[now]

    @staticmethod
    def message(kind: EventKind, level: float) -> str:
        if kind is EventKind.UNDER_EXPOSED:
            return f"{under_exposed_text(level)}; raise the exposure or gain"
        if kind is EventKind.FLAT_FRAMES:
            return f"{flat_text()}: no plume here does not mean no spray; check the camera"
        return f"exposed again: the brightest pixels reach {level:.0f} of 255 grey levels"
