"""`spraycv predict`: a model on images, folders, globs, videos or streams -> overlays + records."""

from __future__ import annotations

import csv
import json
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import typer

from spraycv.cli.batch import Batch, max_pixels_option, plan_inputs
from spraycv.cli.errors import exits
from spraycv.cli.models import load_pipeline
from spraycv.cli.spec_check import (
    SPEC_COLUMN,
    checked,
    checked_summary,
    echo_summary,
    nominal_option,
    overlay_notes,
    spec_rule,
    tolerance_option,
)
from spraycv.cli.steadiness import STEADINESS_COLUMNS, VideoSteadiness
from spraycv.cli.table import TableColumn, print_table
from spraycv.config.daemon import SpecRule
from spraycv.io.exposure import exposure_note
from spraycv.io.video import VideoReadError, is_url, is_video, open_video
from spraycv.measure import measure_file, measure_image
from spraycv.viz.overlay import draw_overlay


class _Records:
    """Measurements as JSON lines and CSV, written as they come (one row per nozzle)."""

    def __init__(self, out: Path, stack: ExitStack):
        self.jsonl = stack.enter_context((out / "measurements.jsonl").open("w"))
        self._csv_file = stack.enter_context((out / "measurements.csv").open("w", newline=""))
        self._csv: csv.DictWriter | None = None
        self.count = 0

    def write(self, source: str, frame: int | None, rows: list[dict[str, Any]]) -> None:
        """Write a frame's records (`checked`; `spec`, the table's cell, left out)."""
        for record in rows:
            row = {"source": source, "frame": frame, **record}
            row.pop("spec", None)
            self.jsonl.write(json.dumps(row) + "\n")
            if self._csv is None:
                self._csv = csv.DictWriter(self._csv_file, fieldnames=list(row))
                self._csv.writeheader()
            self._csv.writerow(row)
            self.count += 1


IMAGE_COLUMNS = (
    TableColumn("source", "source"),
    TableColumn("nozzle", "index"),
    TableColumn("included", "included_angle_deg", "{:.2f}"),
    TableColumn("confidence", "confidence", "{:.2f}"),
    TableColumn("flags", "flags"),
)


@dataclass
class _Run:
    """What every input of one `predict` run shares."""

    predictor: Any
    records: _Records
    batch: Batch
    bar: Any  # tqdm
    out: Path
    overlays: bool
    max_frames: int | None
    max_pixels: int
    rule: SpecRule | None = None  # --nominal-deg, --tolerance-deg
    image_rows: list[dict[str, Any]] = field(default_factory=list)  # the closing tables
    video_rows: list[dict[str, Any]] = field(default_factory=list)

    def print_tables(self) -> None:
        """Each image's nozzles, then each video's nozzles and how steady they read (each
        checked against the spec where one is given, and counted)."""
        spec = (SPEC_COLUMN,) if self.rule else ()
        for columns, rows in (
            (IMAGE_COLUMNS + spec, self.image_rows),
            (STEADINESS_COLUMNS + spec, self.video_rows),
        ):
            if rows:
                print_table(columns, rows)
        echo_summary(self.rule, self.image_rows + self.video_rows, err=False)


def _checked_rows(measurements: list[Any], rule: SpecRule | None) -> list[dict[str, Any]]:
    """Each reading's record, checked against the spec where one is given."""
    return [checked(m.to_dict(), rule, m) for m in measurements]


def _predict_image(run: _Run, source: str) -> None:
    result = measure_file(Path(source), "image", run.predictor, max_pixels=run.max_pixels)
    run.bar.update()
    for note in result.notes:
        run.batch.warn(note)
    if result.error:
        run.batch.fail(result.error)
        return
    assert result.image is not None and result.mask is not None  # measured, so both set
    rows = _checked_rows(result.measurements, run.rule)
    run.records.write(source, None, rows)
    run.image_rows += [{"source": source, **row} for row in rows]
    if run.overlays:
        notes = overlay_notes(rows)
        picture = draw_overlay(result.image, result.mask, result.measurements, notes=notes)
        cv2.imwrite(str(run.out / "overlays" / f"{Path(source).stem}_overlay.png"), picture)


def _predict_video(run: _Run, source: str) -> None:
    """Every frame measured and written; a video that ends before the frame count its
    container announces is a failed input (its frames read are kept)."""
    try:
        video = open_video(source, run.max_pixels)
    except VideoReadError as exc:
        run.batch.fail(str(exc))
        return
    overlay_path = run.out / f"{'stream' if is_url(source) else Path(source).stem}_overlay.mp4"
    writer: cv2.VideoWriter | None = None
    read, dim = 0, None
    steadiness = VideoSteadiness(source, video.fps, video.expected(run.max_frames))
    try:
        run.bar.total = (run.bar.total or 0) + video.expected(run.max_frames)
        for index, frame in enumerate(video.frames(run.max_frames)):
            mask, measurements = measure_image(frame, run.predictor)
            if dim is None and (dim := exposure_note(frame, f"{source}, frame {index}")):
                run.batch.warn(dim)  # the first dark or flat frame speaks for the video
            rows = _checked_rows(measurements, run.rule)
            run.records.write(source, index, rows)
            steadiness.add(index, measurements)
            read += 1
            run.bar.update()
            if run.overlays:
                picture = draw_overlay(frame, mask, measurements, notes=overlay_notes(rows))
                writer = writer or _video_writer(overlay_path, picture, video.fps)
                writer.write(picture)
    finally:
        video.release()
        if writer is not None:
            writer.release()
        run.video_rows += [checked_summary(row, run.rule) for row in steadiness.rows()]
    problem = video.shortfall(read, run.max_frames)
    problem = problem or (None if read else f"{source}: no frame could be read from it")
    if problem:
        run.batch.fail(problem)


def _video_writer(path: Path, first: np.ndarray, fps: float) -> cv2.VideoWriter:
    size = (first.shape[1], first.shape[0])
    return cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, size)


@exits()
def predict(
    sources: list[str] = typer.Argument(
        ..., help="Images, folders, glob patterns, video files or stream URLs."
    ),
    weights: Path | None = typer.Option(
        None, help="Model file: .safetensors, .onnx or .engine (default: the shipped model)."
    ),
    out: Path = typer.Option(Path("outputs/predict"), help="Folder for overlays and records."),
    device: str = typer.Option("cpu", help="cpu | cuda (ONNX Runtime: auto picks providers)."),
    max_frames: int | None = typer.Option(None, help="Stop each video after this many frames."),
    overlays: bool = typer.Option(True, help="Write annotated images / videos."),
    quiet: bool = typer.Option(False, help="No progress bar."),
    max_pixels: int = max_pixels_option(),
    refine: bool = typer.Option(
        True, help="Re-read each plume near its orifice with the model's refiner, if it has one."
    ),
    nominal_deg: float | None = nominal_option(),
    tolerance_deg: float | None = tolerance_option(),
) -> None:
    """Segment and measure every nozzle spray with a trained model.

    Writes OUT/measurements.jsonl and OUT/measurements.csv (one record per nozzle, with its
    source file and frame), and overlays: OUT/overlays/<name>.png, OUT/<video>_overlay.mp4.
    Prints each image's nozzles, and each video's nozzles (tracked as the daemon does) with
    how steadily they read: SD and range of the angle and the apex's SD, frame by frame and
    smoothed. An unreliable reading shows its reason in place of its angle. With
    --nominal-deg and --tolerance-deg each reading (and each video nozzle's steady reading)
    is checked against that spec, as `measure` does; the records get its status and deviation.
    Exits 1 if an input could not be read or measured, or a video ends before the frame
    count its container announces (the others are still measured and written); 2 on a bad
    option, weights that cannot be loaded, or sources that name no file at all.
    """
    from tqdm import tqdm

    rule = spec_rule(nominal_deg, tolerance_deg)
    batch = Batch("measured", echo=lambda line: tqdm.write(line, file=sys.stderr))
    inputs = plan_inputs(sources, batch, reads_streams=True)
    predictor = load_pipeline(weights, device, refine)
    (out / "overlays").mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        records = _Records(out, stack)
        images = sum(not is_video(source) for source in inputs)
        bar = stack.enter_context(tqdm(total=images, unit="frame", disable=quiet))
        run = _Run(predictor, records, batch, bar, out, overlays, max_frames, max_pixels, rule)
        for source in inputs:
            with batch.item(source):
                (_predict_video if is_video(source) else _predict_image)(run, source)
    run.print_tables()
    typer.echo(f"{records.count} measurement(s) from {predictor.name} written under {out}")
    batch.finish()
