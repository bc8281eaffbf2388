"""`spraycv calibrate`: the image scale (mm per pixel) from two points or a checkerboard."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.calibration import (
    CalibrationError,
    scale_from_checkerboard,
    scale_from_points,
    write_source_scale,
)
from spraycv.cli.batch import max_pixels_option
from spraycv.cli.errors import ExitCode, bad_request, exits
from spraycv.io.images import ImageReadError, read_image


def _points(text: str) -> tuple[tuple[float, float], tuple[float, float]]:
    try:
        x1, y1, x2, y2 = (float(v) for v in text.split(","))
    except ValueError:
        raise typer.BadParameter(f"--points takes x1,y1,x2,y2 in pixels; got {text!r}") from None
    return (x1, y1), (x2, y2)


def _pattern(text: str) -> tuple[int, int]:
    try:
        cols, rows = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise typer.BadParameter(
            f"--checkerboard takes the inner corners as COLSxROWS, e.g. 9x6; got {text!r}"
        ) from None
    return cols, rows


def _check_inside(point: tuple[float, float], shape: tuple[int, ...], name: str) -> None:
    # Pixel centres at integers: the image spans -0.5 .. W - 0.5 (docs/cone_angle.md).
    (x, y), (h, w) = point, shape[:2]
    if not (-0.5 <= x <= w - 0.5 and -0.5 <= y <= h - 0.5):
        raise CalibrationError(f"the {name} point ({x:g}, {y:g}) lies outside the {w}x{h} image")


def _scale(
    image_path: Path,
    points: str | None,
    distance_mm: float | None,
    checkerboard: str | None,
    square_mm: float | None,
    max_pixels: int,
) -> float:
    """The scale by the one method chosen; usage errors come before the image is read."""
    if (points is None) == (checkerboard is None):
        raise typer.BadParameter("give either --points with --distance-mm or --checkerboard")
    if points is not None:
        if distance_mm is None:
            raise typer.BadParameter("--points needs --distance-mm")
        p1, p2 = _points(points)
        image = read_image(image_path, max_pixels)
        _check_inside(p1, image.shape, "first")
        _check_inside(p2, image.shape, "second")
        return scale_from_points(p1, p2, distance_mm)
    assert checkerboard is not None  # one of the two, checked above
    if square_mm is None:
        raise typer.BadParameter("--checkerboard needs --square-mm")
    pattern = _pattern(checkerboard)
    return scale_from_checkerboard(read_image(image_path, max_pixels), pattern, square_mm)


@exits(((CalibrationError, ImageReadError), ExitCode.INPUTS_FAILED))
def calibrate(
    image: Path = typer.Argument(
        ..., metavar="IMAGE", help="Picture of the reference, taken by the camera."
    ),
    points: str | None = typer.Option(
        None, help="Two points a known distance apart, as x1,y1,x2,y2 in pixels."
    ),
    distance_mm: float | None = typer.Option(
        None, "--distance-mm", help="Real distance of the two points, mm."
    ),
    checkerboard: str | None = typer.Option(
        None, help="Checkerboard inner corners as COLSxROWS (a 10x7-square board is 9x6)."
    ),
    square_mm: float | None = typer.Option(None, "--square-mm", help="Square side, mm."),
    config: Path | None = typer.Option(
        None, help="YAML config to store the scale in (needs --source; comments are not kept)."
    ),
    source: str | None = typer.Option(
        None, help="Name of the entry under the config's `sources:` (created if missing)."
    ),
    max_pixels: int = max_pixels_option(),
) -> None:
    """Compute the image scale of a camera and print it in mm/px and px/mm.

    The reference (ruler marks or a checkerboard) must lie in the plane of the sprays.
    With --config and --source the scale is written as `mm_per_px` of that source.
    Exits 1 when the scale cannot be computed (the image cannot be read, the board is not
    found), 2 on a bad option or a config file the scale cannot be written to.
    """
    if (config is None) != (source is None):
        raise typer.BadParameter("--config and --source go together")
    mm_per_px = _scale(image, points, distance_mm, checkerboard, square_mm, max_pixels)
    typer.echo(f"mm/px: {mm_per_px:.6f}")
    typer.echo(f"px/mm: {1.0 / mm_per_px:.6f}")
    if config is not None and source is not None:
        try:
            created = write_source_scale(config, source, mm_per_px)
        except CalibrationError as exc:  # the config file, not the image: a bad request
            raise bad_request(str(exc)) from None
        what = "created the entry" if created else "updated"
        typer.echo(f"{config}: {what} sources[name={source}].mm_per_px = {mm_per_px:.6g}")
        if created:  # e.g. the daemon needs a url for every source
            typer.echo(f"complete the new entry {source!r} (e.g. its url) before using it")
