"""`--nominal-deg` and `--tolerance-deg` of `measure` and `predict`: each reading checked
against a nozzle's rating (spraycv.spec, as the daemon checks its sources' specs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import typer
from pydantic import ValidationError

from spraycv.cli.table import TableColumn
from spraycv.config.daemon import SpecRule
from spraycv.geometry import ConeMeasurement
from spraycv.spec import SpecStatus, check_angle, check_reading, spec_summary

SPEC_COLUMN = TableColumn("spec", "spec")  # shown with --nominal-deg


def nominal_option() -> Any:
    return typer.Option(
        None,
        "--nominal-deg",
        help="Nominal included angle (deg): check each reading against it (with "
        "--tolerance-deg), as the daemon's spec does.",
    )


def tolerance_option() -> Any:
    return typer.Option(
        None,
        "--tolerance-deg",
        help="Tolerance (deg) around --nominal-deg; a reading further off is out of spec.",
    )


def spec_rule(nominal_deg: float | None, tolerance_deg: float | None) -> SpecRule | None:
    """The spec of `--nominal-deg` and `--tolerance-deg` (both or neither); a usage error
    otherwise or where the config schema refuses the numbers."""
    if nominal_deg is None and tolerance_deg is None:
        return None
    if nominal_deg is None or tolerance_deg is None:
        raise typer.BadParameter("--nominal-deg and --tolerance-deg go together")
    try:
        return SpecRule(nominal_deg=nominal_deg, tolerance_deg=tolerance_deg)
    except ValidationError as exc:
        first = exc.errors()[0]
        option = "--" + str(first["loc"][0]).replace("_", "-")
        raise typer.BadParameter(f"{option}: {first['msg']}") from None


def spec_cell(row: dict[str, Any]) -> str:
    """The table's cell for a reading checked against a spec: 'ok', 'OUT +6.2',
    'unreliable' or 'not_measured'."""
    if row["spec_status"] == SpecStatus.OUT_OF_SPEC.value:
        return f"OUT {row['spec_deviation_deg']:+.1f}"
    return row["spec_status"]


def checked(row: dict[str, Any], rule: SpecRule | None, m: ConeMeasurement) -> dict[str, Any]:
    """A reading's record with, where a spec is given, its status, deviation and cell."""
    if rule is None:
        return row
    out = {**row, **check_reading(rule, m)}
    return {**out, "spec": spec_cell(out)}


def checked_summary(row: dict[str, Any], rule: SpecRule | None) -> dict[str, Any]:
    """A summary row (a video's nozzle: its last steady reading `included_angle_deg`, or the
    reason it has none, `unreliable`) with, where a spec is given, its check."""
    if rule is None:
        return row
    angle = row.get("included_angle_deg")
    out = {**row, **check_angle(rule, angle, "" if angle is not None else row["unreliable"])}
    return {**out, "spec": spec_cell(out)}


def echo_summary(rule: SpecRule | None, rows: Iterable[dict[str, Any]], err: bool) -> None:
    """The spec's one-line count of the rows' statuses (nothing without a spec)."""
    if rule is not None:
        typer.echo(spec_summary(rule, (r["spec_status"] for r in rows)), err=err)


def overlay_notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One note per checked record for the overlay: its cell ("OUT +6.2") where it is out
    of the spec, else empty (an overlay is read at a glance)."""
    return [r["spec"] if r.get("spec_status") == SpecStatus.OUT_OF_SPEC.value else "" for r in rows]
