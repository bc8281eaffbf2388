"""The human-readable tables of `measure` and `predict` (their JSON and CSV stay whole).

An unreliable reading (ConeMeasurement.unreliable) shows its reason where its included
angle would be, and no half-angles: a table read by eye must not offer a bare angle that
the pipeline itself does not trust.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import typer

# The first is the included angle, whose cell gives the reason of an unreliable reading.
ANGLE_KEYS = ("included_angle_deg", "half_angle_left_deg", "half_angle_right_deg")


@dataclass(frozen=True)
class TableColumn:
    header: str
    key: str  # in the row (a measurement's to_dict, plus the command's own keys)
    fmt: str = "{}"


def format_value(fmt: str, value: object) -> str:
    """One cell: '-' for a missing value, lists joined by commas."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value) or "-"
    return fmt.format(value)


def cell(column: TableColumn, row: Mapping[str, Any]) -> str:
    """A row's cell in a column; an unreliable reading's angles give way to its reason."""
    if row.get("unreliable") and column.key in ANGLE_KEYS:
        return f"unreliable: {row['unreliable']}" if column.key == ANGLE_KEYS[0] else "-"
    return format_value(column.fmt, row.get(column.key))


def print_table(
    columns: Sequence[TableColumn],
    rows: Sequence[Mapping[str, Any]],
    echo: Callable[[str], Any] = typer.echo,
) -> None:
    """Left-aligned columns under a header line."""
    cells = [[c.header for c in columns]]
    cells += [[cell(c, r) for c in columns] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    for line in cells:
        echo("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
