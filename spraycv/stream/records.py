"""What the daemon writes: one record per inferred frame, per nozzle measurement, per event.

A nozzle record's columns are its own fields (time, source, frame, tracking, spec status,
model) followed by the measurement's columns (ConeMeasurement.to_dict), so a field added to
ConeMeasurement is recorded, served and stored with no edit here (the database needs one
migration adding its column: spraycv/stream/schema.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, get_args, get_type_hints

from spraycv.geometry import ConeMeasurement
from spraycv.geometry.types import Column, JsonValue, ValueEnum, exported_columns, finite_or_none
from spraycv.spec import SpecStatus


class EventKind(ValueEnum):
    """What happened (stored as the value)."""

    ALARM_RAISED = "alarm_raised"
    ALARM_CLEARED = "alarm_cleared"
    SOURCE_LOST = "source_lost"
    SOURCE_CONNECTED = "source_connected"
    UNDER_EXPOSED = "under_exposed"  # a source's frames too dark to trust "no plume"
    FLAT_FRAMES = "flat_frames"  # a source's frames flat (a covered lens, a saturated sensor)
    EXPOSURE_RESTORED = "exposure_restored"


def _plain(value: Any) -> Any:
    """An enum as its value (what JSON and SQLite hold), anything else as it is."""
    return value.value if isinstance(value, Enum) else value


def _value_kind(hint: Any) -> type:
    """float, int or str: the column type of a record field (Optional and enums unwrapped)."""
    base = next((a for a in get_args(hint) if a is not type(None)), hint)
    for kind in (str, int, float):  # str first: the enums are str enums
        if isinstance(base, type) and issubclass(base, kind):
            return kind
    raise TypeError(f"a record field of type {hint!r} has no column type")


def record_columns(cls: type, skip: tuple[str, ...] = ()) -> tuple[Column, ...]:
    """One column per field of a record dataclass, in field order (enums as their values)."""
    hints = get_type_hints(cls)

    def read(name: str) -> Callable[[Any], JsonValue]:
        return lambda record: _plain(getattr(record, name))

    return tuple(
        Column(f.name, _value_kind(hints[f.name]), read(f.name))
        for f in dataclasses.fields(cls)
        if f.name not in skip
    )


@dataclass(frozen=True)
class NozzleRecord:
    """One nozzle in one frame: the record's own fields, then the measurement's columns."""

    time: float
    source: str
    frame_no: int
    nozzle_id: int | None  # stable along the boom; None when the plume could not be placed
    smoothed_angle_deg: float | None  # what the spec is checked on; None where not measured
    spec_status: SpecStatus
    model: str
    backend: str
    measurement: Mapping[str, JsonValue]  # ConeMeasurement.to_dict()
    # the spread of the nozzle's recent readings (NozzleReading.spread_dict): served by
    # /latest, not stored (the store keeps every reading, so any window can be recomputed)
    spread: Mapping[str, Any] | None = None

    @classmethod
    def from_measurement(
        cls,
        m: ConeMeasurement,
        *,
        time: float,
        source: str,
        frame_no: int,
        nozzle_id: int | None,
        smoothed: float | None,
        spec_status: SpecStatus,
        model: str,
        backend: str,
        spread: Mapping[str, Any] | None = None,
    ) -> NozzleRecord:
        return cls(
            time=time, source=source, frame_no=frame_no, nozzle_id=nozzle_id,
            smoothed_angle_deg=finite_or_none(smoothed), spec_status=spec_status, model=model,
            backend=backend, measurement=m.to_dict(), spread=spread,
        )  # fmt: skip

    def to_dict(self) -> dict[str, JsonValue]:
        """The stored row: the columns of `nozzle_columns()`."""
        own = {c.name: c.read(self) for c in OWN_NOZZLE_COLUMNS}
        return {**own, **self.measurement}

    def served(self) -> dict[str, Any]:
        """What /latest serves: the stored row and the spread."""
        return {**self.to_dict(), "spread": self.spread}


OWN_NOZZLE_COLUMNS = record_columns(NozzleRecord, skip=("measurement", "spread"))


def nozzle_columns(measurement: type[ConeMeasurement] = ConeMeasurement) -> tuple[Column, ...]:
    """Every column of a nozzle record (and of the `measurements` table), in order."""
    return OWN_NOZZLE_COLUMNS + exported_columns(measurement)


@dataclass(frozen=True)
class FrameRecord:
    """One inferred frame and its nozzles (a frame with no spray has an empty list)."""

    time: float  # capture time
    source: str
    frame_no: int
    width: int
    height: int
    latency_s: float  # capture -> measurement
    nozzles: list[NozzleRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """What /latest serves for the frame (each nozzle's spread included)."""
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**own, "nozzles": [n.served() for n in self.nozzles]}


@dataclass(frozen=True)
class Event:
    """Something an operator should know: alarm raised/cleared, source lost/back, frames
    under-exposed/exposed again."""

    time: float
    source: str
    kind: EventKind
    nozzle_id: int | None = None
    angle_deg: float | None = None
    message: str = ""
    snapshot: str | None = None  # path of the annotated frame saved with an alarm

    def to_dict(self) -> dict[str, JsonValue]:
        return {c.name: c.read(self) for c in EVENT_COLUMNS}


EVENT_COLUMNS = record_columns(Event)
