"""`spraycv measure`: cone angles of images or masks, as a table or JSON lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2
import typer

from spraycv.cli.batch import Batch, max_pixels_option, plan_inputs
from spraycv.cli.errors import exits
from spraycv.cli.models import load_pipeline
from spraycv.cli.spec_check import (
    SPEC_COLUMN,
    checked,
    echo_summary,
    nominal_option,
    overlay_notes,
    spec_rule,
    tolerance_option,
)
from spraycv.cli.table import TableColumn, print_table
from spraycv.config.daemon import SpecRule
from spraycv.config.geometry import BandConfig, GeometryConfig
from spraycv.geometry import MeasureHints
from spraycv.measure import FileResult, InputKind, Measurer, Segmenter, measure_file
from spraycv.segment.classical import segment_classical

TABLE_COLUMNS = (
    TableColumn("source", "source"),
    TableColumn("nozzle", "index"),
    TableColumn("included", "included_angle_deg", "{:.2f}"),
    TableColumn("left", "half_angle_left_deg", "{:.2f}"),
    TableColumn("right", "half_angle_right_deg", "{:.2f}"),
    TableColumn("tilt", "tilt_deg", "{:.1f}"),
    TableColumn("length_px", "length_px", "{:.0f}"),
    TableColumn("flags", "flags"),
)


def _pair(text: str | None, name: str) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise typer.BadParameter(f"{name} takes two numbers as A,B; got {text!r}") from None
    return a, b


def _records(result: FileResult, rule: SpecRule | None) -> list[dict]:
    """One record per reading, checked against the spec where one is given."""
    rows = []
    for m in result.measurements:
        row = {"source": str(result.source), "input": result.kind, **m.to_dict()}
        rows.append(checked(row, rule, m))
    return rows


@exits()
def measure(
    sources: list[str] = typer.Argument(..., help="Image or mask files, folders or glob patterns."),
    as_json: bool = typer.Option(False, "--json", help="One JSON record per nozzle on stdout."),
    kind: str = typer.Option("auto", help="auto | image | mask: how to read the inputs."),
    segmenter: str = typer.Option(
        "auto", help="auto (the model if one is shipped, else classical) | model | classical."
    ),
    weights: Path | None = typer.Option(None, help="Model weights (default: the shipped model)."),
    overlay_dir: Path | None = typer.Option(None, "--overlay-dir", help="Write overlays here."),
    apex: str | None = typer.Option(None, help="Known apex X,Y in pixels (single nozzle)."),
    axis: str | None = typer.Option(None, help="Known nozzle axis UX,UY, e.g. 0,1 = down."),
    mm_per_px: float | None = typer.Option(None, help="Scale, for lengths and areas in mm."),
    nozzle_height_mm: float | None = typer.Option(None, help="Height above target, for coverage."),
    band_start: float = typer.Option(BandConfig().start_frac, help="Band start, fraction of L."),
    band_end: float = typer.Option(BandConfig().end_frac, help="Band end, fraction of L."),
    max_pixels: int = max_pixels_option(),
    nominal_deg: float | None = nominal_option(),
    tolerance_deg: float | None = tolerance_option(),
) -> None:
    """Measure the spray cone angle of each nozzle in images or masks.

    Images are segmented by the shipped model (or the classical threshold segmenter when
    no model is shipped, or with --segmenter classical); single-channel 0/1 or 0/255 files
    are read as masks (a single-channel file with few other grey levels is read as a photo,
    with a warning). With --nominal-deg and --tolerance-deg each reading is checked against
    that spec (ok, out of spec, or unreliable: not checked) and a summary line follows; the
    exit code does not depend on it. Exits 1 if any input could not be measured (the others
    still are), 2 on a bad option or when the sources name no file at all.
    """
    if kind not in ("auto", "image", "mask"):
        raise typer.BadParameter(f"--kind must be auto, image or mask; got {kind!r}")
    config = _geometry(band_start, band_end)
    apex_xy, axis_uv = _pair(apex, "--apex"), _pair(axis, "--axis")
    hints = MeasureHints(
        apex=apex_xy, axis=axis_uv, mm_per_px=mm_per_px, nozzle_height_mm=nozzle_height_mm
    )
    rule = spec_rule(nominal_deg, tolerance_deg)
    input_kind: InputKind = kind  # type: ignore[assignment]
    batch = Batch("measured")
    inputs = plan_inputs(sources, batch, reads_streams=False)
    segment = pick_segmenter(segmenter, weights)
    rows: list[dict] = []
    for path in inputs:
        with batch.item(path):
            result = measure_file(Path(path), input_kind, segment, hints, config, max_pixels)
            for note in result.notes:
                batch.warn(note)
            if result.error:
                batch.fail(result.error)
                continue
            rows += _emit(result, as_json, overlay_dir, rule)
    _print_rows(rows, as_json, rule)
    batch.finish()


def _geometry(band_start: float, band_end: float) -> GeometryConfig:
    """The geometry with `--band-start` and `--band-end`; a usage error where they clash."""
    try:
        return GeometryConfig(band=BandConfig(start_frac=band_start, end_frac=band_end))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _print_rows(rows: list[dict], as_json: bool, rule: SpecRule | None) -> None:
    """The table (the JSON lines are out already) and, with a spec, its summary line:
    beside JSON lines on stdout it goes to stderr."""
    if not as_json:
        print_table(TABLE_COLUMNS + ((SPEC_COLUMN,) if rule else ()), rows)
    echo_summary(rule, rows, err=as_json)


def _emit(
    result: FileResult, as_json: bool, overlay_dir: Path | None, rule: SpecRule | None
) -> list[dict]:
    """A measured file's records (printed now with --json; checked against the spec where
    one is given) and its overlay."""
    rows = _records(result, rule)
    if as_json:
        for row in rows:
            sys.stdout.write(json.dumps(row) + "\n")
    if overlay_dir is not None:
        _write_overlay(result, overlay_dir, overlay_notes(rows))
    return rows


def pick_segmenter(choice: str, weights: Path | None) -> Segmenter | Measurer:
    """The segmenter for `--segmenter` and `--weights`; a bad choice is a usage error."""
    from spraycv.paths import default_weights

    if choice not in ("auto", "model", "classical"):
        raise typer.BadParameter(f"--segmenter must be auto, model or classical; got {choice!r}")
    path = weights or default_weights()
    if choice == "classical" or (choice == "auto" and weights is None and not path.is_file()):
        return segment_classical
    return load_pipeline(path)


def _write_overlay(result: FileResult, overlay_dir: Path, notes: list[str]) -> None:
    from spraycv.viz.overlay import draw_overlay

    overlay_dir.mkdir(parents=True, exist_ok=True)
    base = result.image if result.image is not None else result.mask * 255
    picture = draw_overlay(base, result.mask, result.measurements, notes=notes)
    cv2.imwrite(str(overlay_dir / f"{result.source.stem}_overlay.png"), picture)
