"""A nozzle's readings against its specification (nominal angle and tolerance, the
`SpecRule` of the config schema): the statuses the daemon stores, and `measure`, `predict`
and the Analyse page print."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from spraycv.config.daemon import SpecRule
from spraycv.geometry.types import ConeMeasurement, ValueEnum


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


def check_angle(
    rule: SpecRule, angle: float | None, unreliable: str = ""
) -> dict[str, str | float | None]:
    """An angle's columns against a spec: `spec_status` (a SpecStatus value) and
    `spec_deviation_deg`, the angle less the nominal (None without an angle)."""
    status = reading_status(rule, angle, unreliable)
    deviation = None if angle is None else angle - rule.nominal_deg
    return {"spec_status": status.value, "spec_deviation_deg": deviation}


def check_reading(rule: SpecRule, m: ConeMeasurement) -> dict[str, str | float | None]:
    """A reading's columns against a spec (`check_angle` of its included angle)."""
    return check_angle(rule, m.included_angle_deg if m.ok else None, m.unreliable)


def spec_summary(rule: SpecRule, statuses: Iterable[str]) -> str:
    """One line: how many readings (their `spec_status` values) are in, out of the spec,
    or could not be checked."""
    count = Counter(statuses)
    return (
        f"spec {rule.nominal_deg:g} +- {rule.tolerance_deg:g} deg: "
        f"{count[SpecStatus.OK.value]} ok, {count[SpecStatus.OUT_OF_SPEC.value]} out of spec, "
        f"{count[SpecStatus.UNRELIABLE.value]} unreliable, "
        f"{count[SpecStatus.NOT_MEASURED.value]} not measured"
    )
