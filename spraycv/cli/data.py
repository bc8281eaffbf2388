"""`spraycv data ...`: commands on annotated data sets."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.errors import ExitCode, exits
from spraycv.data.check import check_samples
from spraycv.data.formats.registry import AUTO, detect_format, format_names, load_samples
from spraycv.data.sample import DataError

data_app = typer.Typer(help="Inspect annotated data sets (mask folders, COCO, LabelMe).")


@data_app.callback()
def _data() -> None:
    """Inspect annotated data sets (mask folders, COCO, LabelMe)."""
    # A callback keeps `check` a sub-command even while it is the only command.


@data_app.command()
@exits((DataError, ExitCode.INPUTS_FAILED))  # the data set cannot be read at all
def check(
    path: Path = typer.Argument(..., help="Data set folder or annotation JSON file."),
    fmt: str = typer.Option(AUTO, "--format", help=" | ".join(format_names())),
) -> None:
    """Load every image and mask; print one line per problem and a summary.

    Exits 1 if any problem is found (or the data set cannot be read at all).
    """
    name = detect_format(path) if fmt == AUTO else fmt
    samples = load_samples(path, name)
    problems = check_samples(samples)
    for problem in problems:
        typer.echo(str(problem))
    bad = len({p.sample_id for p in problems})
    typer.echo(
        f"{len(samples)} samples ({name}) in {path}: "
        + (f"{len(problems)} problems in {bad} samples" if problems else "all OK")
    )
    if problems:
        raise typer.Exit(ExitCode.INPUTS_FAILED)
