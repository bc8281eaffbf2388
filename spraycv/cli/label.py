"""`spraycv label ...`: help with labelling one's own photos."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.batch import max_pixels_option
from spraycv.cli.errors import ExitCode, bad_request, exits
from spraycv.cli.models import load_model
from spraycv.io.images import IMAGE_SUFFIXES, ImageReadError, source_files
from spraycv.label.lines import LINES_FILE, LineTruthError

label_app = typer.Typer(
    help="Help label your own photos: boundary lines to validate on, or masks to train on."
)


@label_app.callback()
def _label() -> None:
    """Help label your own photos: boundary lines to validate on, or masks to train on."""
    # A callback keeps the commands sub-commands, whatever their number.


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


@label_app.command("lines")
@exits((LineTruthError, ExitCode.BAD_REQUEST), (ImageReadError, ExitCode.INPUTS_FAILED))
def lines(
    folder: Path = typer.Argument(..., metavar="DIR", help="Folder of photos (not recursive)."),
    headless: bool = typer.Option(
        False, help="No window: add an entry per new photo to DIR/lines.json and check it."
    ),
) -> None:
    """Mark the two boundary lines of each nozzle on your photos, into DIR/lines.json.

    In the window, per nozzle: two clicks on one boundary and two on the other, along the
    straight part near the nozzle (the keys are listed at the bottom of the window).

    Without a display, or with --headless: an entry per photo (nozzles: null) to fill in
    by hand, and the file checked. See docs/validate_your_nozzles.md.

    Then: spraycv eval --weights W --data DIR.
    """
    from spraycv.label.lines import LinesFile, describe_lines, load_lines, save_lines, with_images
    from spraycv.label.session import start_session, to_file
    from spraycv.label.window import run_window, window_available

    if not folder.is_dir():
        raise typer.BadParameter(f"{folder}: not a folder")
    keys = [p.name for p in source_files(folder)]
    if not keys:
        raise bad_request(f"no images in {folder} ({', '.join(IMAGE_SUFFIXES)})")
    path = folder / LINES_FILE
    truth = load_lines(path) if path.is_file() else LinesFile()
    no_window = "asked for --headless" if headless else window_available()
    if no_window is None:
        truth = to_file(
            run_window(folder, start_session(truth, keys), lambda t: save_lines(path, t))
        )
    else:
        truth = with_images(truth, keys)
        save_lines(path, truth)
        typer.echo(
            f"no window ({no_window}): fill in {path} by hand, then run this again to check it",
            err=True,
        )
    for line in describe_lines(truth, keys):
        typer.echo(line)
    typer.echo(f"written to {path}")


@label_app.command("lines-from-render")
@exits((FileNotFoundError, ExitCode.BAD_REQUEST))
def lines_from_render(
    dataset: Path = typer.Argument(..., metavar="DATASET", help="A rendered dataset folder."),
    out: Path | None = typer.Option(
        None, help="The lines.json to write (default: DATASET/lines.json)."
    ),
    limit: int | None = typer.Option(None, help="Only the first N frames."),
) -> None:
    """Write a rendered dataset's truth as line truth, the lines a person would click.

    To try `spraycv eval` on line truth where the exact answer is known:
    spraycv eval --data DATASET --truth lines (or --data the folder of --out).
    """
    import os

    from spraycv.evaluation.heldout import read_records
    from spraycv.label.lines import lines_from_records, save_lines

    records = read_records(dataset)[:limit]
    out = out or dataset / LINES_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    truth = lines_from_records(records, image_root=os.path.relpath(dataset, out.parent))
    save_lines(out, truth)
    nozzles = sum(len(n) for _, n in truth.labelled())
    typer.echo(f"{len(truth.images)} frames, {nozzles} nozzles written to {out}")
