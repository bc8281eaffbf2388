"""`spraycv predict`: a model on images, folders, globs, videos or streams -> overlays + records."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import typer

from spraycv.paths import default_weights

VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg")


def _is_video(source: str) -> bool:
    """A video file, a stream URL (rtsp://, http://...) or a camera index."""
    return "://" in source or source.isdigit() or Path(source).suffix.lower() in VIDEO_SUFFIXES


def _video_frames(source: str, max_frames: int | None) -> tuple[Iterator[np.ndarray], float, int]:
    """(frames, fps, frame count or 0 when unknown) of a video file, URL or camera index."""
    cap = cv2.VideoCapture(int(source) if source.isdigit() else source)
    if not cap.isOpened():
        raise ValueError(f"{source}: cannot open as a video file or stream")
    fps = cap.get(cv2.CAP_PROP_FPS) or 10.0
    count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    if max_frames is not None:
        count = min(count, max_frames) if count > 0 else max_frames

    def frames() -> Iterator[np.ndarray]:
        try:
            n = 0
            while max_frames is None or n < max_frames:
                ok, frame = cap.read()
                if not ok:
                    return
                n += 1
                yield frame
        finally:
            cap.release()

    return frames(), fps, count


class _Records:
    """Measurements as JSON lines and CSV, written as they come (one row per nozzle)."""

    def __init__(self, out: Path, stack: ExitStack):
        self.jsonl = stack.enter_context((out / "measurements.jsonl").open("w"))
        self._csv_file = stack.enter_context((out / "measurements.csv").open("w", newline=""))
        self._csv: csv.DictWriter | None = None
        self.count = 0

    def write(self, source: str, frame: int | None, measurements: list[Any]) -> None:
        for m in measurements:
            row = {"source": source, "frame": frame, **m.to_dict()}
            self.jsonl.write(json.dumps(row) + "\n")
            if self._csv is None:
                self._csv = csv.DictWriter(self._csv_file, fieldnames=list(row))
                self._csv.writeheader()
            self._csv.writerow(row)
            self.count += 1


def _measure(predictor: Any, image: np.ndarray) -> tuple[np.ndarray, list[Any], np.ndarray]:
    from spraycv.geometry import measure_cones
    from spraycv.measure import segment_image, with_apex_prior
    from spraycv.viz.overlay import draw_overlay

    mask, apexes = segment_image(predictor, image)
    measurements = measure_cones(mask, hints=with_apex_prior(None, apexes))
    return mask, measurements, draw_overlay(image, mask, measurements)


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
) -> None:
    """Segment and measure every nozzle spray with a trained model.

    Writes OUT/measurements.jsonl and OUT/measurements.csv (one record per nozzle, with its
    source file and frame), and overlays: OUT/overlays/<name>.png, OUT/<video>_overlay.mp4.
    Exits 1 if an input could not be read (the others are still measured).
    """
    from tqdm import tqdm

    from spraycv.io.images import expand_sources, read_image
    from spraycv.runtime.predictor import load_predictor

    weights = weights or default_weights()
    if not weights.is_file():
        hint = " (no model is shipped yet: train one, or pass --weights)"
        typer.echo(f"error: weights file not found: {weights}{hint}", err=True)
        raise typer.Exit(2)
    try:
        predictor = load_predictor(weights, device)
    except (ValueError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    videos = [s for s in sources if _is_video(s)]
    images = list(expand_sources(s for s in sources if not _is_video(s)))
    (out / "overlays").mkdir(parents=True, exist_ok=True)
    failures = 0
    with ExitStack() as stack:
        records = _Records(out, stack)
        bar = stack.enter_context(tqdm(total=len(images), unit="frame", disable=quiet))
        for path in images:
            try:
                image = read_image(path)
            except ValueError as exc:
                failures += 1
                tqdm.write(f"error: {exc}")
                bar.update()
                continue
            _, measurements, picture = _measure(predictor, image)
            records.write(str(path), None, measurements)
            if overlays:
                cv2.imwrite(str(out / "overlays" / f"{path.stem}_overlay.png"), picture)
            bar.update()
        for source in videos:
            try:
                frames, fps, count = _video_frames(source, max_frames)
            except ValueError as exc:
                failures += 1
                tqdm.write(f"error: {exc}")
                continue
            bar.total = (bar.total or 0) + count
            bar.refresh()
            writer = None
            for index, frame in enumerate(frames):
                _, measurements, picture = _measure(predictor, frame)
                records.write(source, index, measurements)
                if overlays and writer is None:
                    name = Path(source).stem if "://" not in source else "stream"
                    path = out / f"{name}_overlay.mp4"
                    size = (picture.shape[1], picture.shape[0])
                    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, size)
                if writer is not None:
                    writer.write(picture)
                bar.update()
            if writer is not None:
                writer.release()
    typer.echo(f"{records.count} measurement(s) from {predictor.name} written under {out}")
    if failures:
        typer.echo(f"{failures} input(s) could not be read", err=True)
        raise typer.Exit(1)
