"""`spraycv label ...`: help with labelling one's own photos."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.io.images import expand_sources

label_app = typer.Typer(help="Help label your own photos (model proposals for LabelMe).")


@label_app.callback()
def _label() -> None:
    """Help label your own photos (model proposals for LabelMe)."""
    # A callback keeps `propose` a sub-command even while it is the only command.


@label_app.command()
def propose(
    folder: Path = typer.Argument(..., metavar="DIR", help="Folder of photos (not recursive)."),
    weights: Path | None = typer.Option(None, help="Model weights (default: the shipped model)."),
    overwrite: bool = typer.Option(False, help="Replace existing label files."),
    label: str = typer.Option("spray", help="Label of the proposed polygons."),
    tolerance_px: float = typer.Option(
        0.0, "--tolerance-px", help="Simplify outlines by up to this many px (0: exact)."
    ),
) -> None:
    """Segment every photo in DIR and write the mask as LabelMe JSON next to it.

    Open the folder in LabelMe, correct the polygons, then train on it. Photos that
    already have a `<stem>.json` are skipped unless --overwrite. Exits 1 if any photo
    could not be labelled (the others still are).
    """
    from spraycv.label import propose_labels
    from spraycv.paths import default_weights
    from spraycv.runtime.predictor import load_predictor

    if not folder.is_dir():
        raise typer.BadParameter(f"{folder}: not a folder")
    paths = list(expand_sources([folder]))
    if not paths:
        typer.echo(f"no images in {folder}", err=True)
        raise typer.Exit(1)
    try:
        predictor = load_predictor(weights or default_weights())
    except (ValueError, FileNotFoundError) as exc:
        raise typer.BadParameter(f"cannot load the model: {exc}") from None

    def show(outcome: str, path: Path, detail: str) -> None:
        typer.echo(f"{outcome}: {path.name}: {detail}", err=outcome == "failed")

    report = propose_labels(
        paths,
        predictor,
        overwrite=overwrite,
        label=label,
        tolerance_px=tolerance_px,
        on_result=show,
    )
    typer.echo(report.summary())
    if report.failed:
        raise typer.Exit(1)
