"""A nozzle's readings against its specification (nominal angle and tolerance, the
`SpecRule` of the config schema): the statuses the daemon stores and `measure` prints."""

from __future__ import annotations

from spraycv.config.daemon import SpecRule
from spraycv.geometry.types import ValueEnum


class SpecStatus(ValueEnum):
    """A nozzle's state against its spec (stored as the value)."""

    OK = "ok"
    OUT_OF_SPEC = "out_of_spec"  # violating, not (yet) an alarm
    ALARM = "alarm"
    NO_SPEC = "no_spec"
    NOT_MEASURED = "not_measured"
    UNRELIABLE = "unreliable"  # measured, but too doubtful to check (the reading says why)


def reading_status(rule: SpecRule | None, angle: float | None, unreliable: str = "") -> SpecStatus:
    """One reading against a spec, on its own (no debounce, so never ALARM).

    angle: None where the nozzle was not measured; unreliable: the reading's reasons not to
    trust it (ConeMeasurement.unreliable), which make it UNRELIABLE whatever its angle.
    """
    if rule is None:
        return SpecStatus.NO_SPEC
    if unreliable:
        return SpecStatus.UNRELIABLE
    if angle is None:
        return SpecStatus.NOT_MEASURED
    return SpecStatus.OUT_OF_SPEC if rule.violated_by(angle) else SpecStatus.OK
