"""Spec rules per nozzle: an alarm after N consecutive violations, cleared after recovery."""

from __future__ import annotations

from dataclasses import dataclass

from spraycv.config.daemon import AlarmConfig, SpecRule
from spraycv.spec import SpecStatus, reading_status
from spraycv.stream.records import EventKind


@dataclass
class _NozzleAlarm:
    violations: int = 0
    recoveries: int = 0
    active: bool = False


class AlarmMonitor:
    """Per (source, nozzle) debounce of spec violations; returns the transitions."""

    def __init__(self, config: AlarmConfig):
        self.config = config
        self._state: dict[tuple[str, int], _NozzleAlarm] = {}

    def update(
        self,
        source: str,
        nozzle_id: int,
        angle: float | None,
        rule: SpecRule | None,
        unreliable: str = "",
    ) -> tuple[SpecStatus, EventKind | None]:
        """(status now, the alarm raised or cleared, if any) for one smoothed angle.

        angle: None when the frame did not measure the nozzle; unreliable: the frame's
        reading was measured but marked unreliable (ConeMeasurement.unreliable). Neither
        confirms nor clears an alarm, nor counts towards one.
        """
        status = reading_status(rule, angle, unreliable)
        if status is SpecStatus.NO_SPEC:
            return status, None
        state = self._state.setdefault((source, nozzle_id), _NozzleAlarm())
        if status in (SpecStatus.UNRELIABLE, SpecStatus.NOT_MEASURED):
            return (SpecStatus.ALARM if state.active else status), None
        if status is SpecStatus.OUT_OF_SPEC:
            state.violations += 1
            state.recoveries = 0
            if not state.active and state.violations >= self.config.raise_after:
                state.active = True
                return SpecStatus.ALARM, EventKind.ALARM_RAISED
            return (SpecStatus.ALARM if state.active else SpecStatus.OUT_OF_SPEC), None
        state.violations = 0
        if state.active:
            state.recoveries += 1
            if state.recoveries >= self.config.clear_after:
                state.active = False
                state.recoveries = 0
                return SpecStatus.OK, EventKind.ALARM_CLEARED
            return SpecStatus.ALARM, None
        return SpecStatus.OK, None

    def active(self) -> list[tuple[str, int]]:
        """(source, nozzle id) of the open alarms."""
        return [key for key, s in self._state.items() if s.active]
