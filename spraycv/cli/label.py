"""`spraycv label ...`: help with labelling one's own photos."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.batch import max_pixels_option
from spraycv.cli.errors import ExitCode, bad_request, exits
from spraycv.cli.models import load_model
from spraycv.io.images import IMAGE_SUFFIXES, source_files

label_app = typer.Typer(help="Help label your own photos (model proposals for LabelMe).")


@label_app.callback()
def _label() -> None:
    """Help label your own photos (model proposals for LabelMe)."""
    # A callback keeps `propose` a sub-command even while it is the only command.


@label_app.command()
@exits()
def propose(
    folder: Path = typer.Argument(..., metavar="DIR", help="Folder of photos (not recursive)."),
    weights: Path | None = typer.Option(None, help="Model weights (default: the shipped model)."),
    overwrite: bool = typer.Option(False, help="Replace existing label files."),
    label: str = typer.Option("spray", help="Label of the proposed polygons."),
    tolerance_px: float = typer.Option(
        0.0, "--tolerance-px", help="Simplify outlines by up to this many px (0: exact)."
    ),
    max_pixels: int = max_pixels_option(),
) -> None:
    """Segment every photo in DIR and write the mask as LabelMe JSON next to it.

    Open the folder in LabelMe, correct the polygons, then train on it. Photos that
    already have a `<stem>.json` are skipped unless --overwrite. Exits 1 if any photo
    could not be labelled (the others still are), 2 when DIR holds no photos.
    """
    from spraycv.label import propose_labels

    if not folder.is_dir():
        raise typer.BadParameter(f"{folder}: not a folder")
    paths = source_files(folder)
    if not paths:
        raise bad_request(f"no images in {folder} ({', '.join(IMAGE_SUFFIXES)})")
    predictor = load_model(weights)

    def show(outcome: str, path: Path, detail: str) -> None:
        typer.echo(f"{outcome}: {path.name}: {detail}", err=outcome == "failed")

    report = propose_labels(
        paths,
        predictor,
        overwrite=overwrite,
        label=label,
        tolerance_px=tolerance_px,
        on_result=show,
        max_pixels=max_pixels,
    )
    typer.echo(report.summary())
    if report.failed:
        raise typer.Exit(ExitCode.INPUTS_FAILED)
