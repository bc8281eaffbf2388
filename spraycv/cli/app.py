"""The `spraycv` command line: one Typer app, one module per command."""

from __future__ import annotations

import typer

from spraycv.cli.measure import measure

app = typer.Typer(
    name="spraycv",
    help="Measure agricultural nozzle spray cone angles from camera images.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command()(measure)


def main() -> None:
    """Console-script entry point."""
    app()
