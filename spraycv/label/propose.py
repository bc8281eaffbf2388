"""Propose labels: segment each photo with a model and save the mask as an editable
LabelMe JSON next to it (`<stem>.json`), for a person to correct rather than draw."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from spraycv.data.formats.labelme import mask_to_polygons, write_labelme
from spraycv.io.images import read_image

Segmenter = Callable[[np.ndarray], np.ndarray]  # (H, W[, 3]) uint8 -> (H, W) {0, 1} mask


@dataclass
class ProposeReport:
    """What `propose_labels` did, file by file.

    written: (image, label file) pairs written; skipped: images whose label file already
    existed; failed: (image, reason) pairs, one per image that could not be labelled.
    """

    written: list[tuple[Path, Path]] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    failed: list[tuple[Path, str]] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{len(self.written)} written, {len(self.skipped)} skipped (label file exists), "
            f"{len(self.failed)} failed"
        )


def label_path(image_path: Path) -> Path:
    """The LabelMe file of a photo: same folder and stem, `.json`."""
    return image_path.with_suffix(".json")


def _write_proposal(
    path: Path,
    target: Path,
    predictor: Segmenter,
    *,
    label: str,
    tolerance_px: float,
    min_area_px: float,
    max_pixels: int | None,
) -> tuple[str, str]:
    """Segment one image and write its LabelMe file `target`; returns ("written", "<file>
    (<n> polygons)"), or ("failed", the reason) where it could not be labelled."""
    try:
        image = read_image(path, max_pixels)
        mask = predictor(image)
        polygons = mask_to_polygons(mask, tolerance_px=tolerance_px, min_area_px=min_area_px)
        write_labelme(target, path, polygons, image.shape[:2], label=label)
    # ValueError covers unreadable images (ImageReadError) and bad shapes (DataError);
    # RuntimeError a model that fails on one image: either way the next image is tried.
    except (ValueError, RuntimeError, OSError) as exc:
        return "failed", str(exc)
    return "written", f"{target.name} ({len(polygons)} polygons)"


def _record(report: ProposeReport, outcome: str, path: Path, target: Path, detail: str) -> None:
    """Add one image's outcome ("written", "skipped" or "failed") to the report."""
    if outcome == "written":
        report.written.append((path, target))
    elif outcome == "skipped":
        report.skipped.append(path)
    else:
        report.failed.append((path, detail))


def _propose_each(
    paths: Iterable[str | Path],
    write: Callable[[Path, Path], tuple[str, str]],
    overwrite: bool,
    on_result: Callable[[str, Path, str], None] | None,
) -> ProposeReport:
    """The report of labelling each image with `write(image, label file)`, where its label
    file is neither taken by an earlier image of this run nor (unless `overwrite`) there."""
    report = ProposeReport()
    claimed: dict[Path, Path] = {}  # label file -> the image it was written for in this run
    for path in (Path(p) for p in paths):
        target = label_path(path)
        if target in claimed:  # a.jpg and a.png would share a.json
            outcome = "failed"
            detail = f"{target.name} is already the label file of {claimed[target].name}"
        elif target.exists() and not overwrite:
            outcome, detail = "skipped", f"{target.name} exists"
        else:
            outcome, detail = write(path, target)
        if outcome == "written":
            claimed[target] = path
        _record(report, outcome, path, target, detail)
        if on_result is not None:
            on_result(outcome, path, detail)
    return report


def propose_labels(
    paths: Iterable[str | Path],
    predictor: Segmenter,
    *,
    overwrite: bool = False,
    label: str = "spray",
    tolerance_px: float = 0.0,
    min_area_px: float = 4.0,
    on_result: Callable[[str, Path, str], None] | None = None,
    max_pixels: int | None = None,
) -> ProposeReport:
    """Write a LabelMe file with the predicted spray mask next to each image.

    Parameters
    ----------
    paths : iterable of str or Path
        Image files.
    predictor : callable
        (H, W, 3) or (H, W) uint8 image -> (H, W) uint8 {0, 1} mask, e.g. a
        `spraycv.runtime.predictor.Predictor`.
    overwrite : bool
        Replace existing label files (by default they are skipped: they may hold a
        person's corrections).
    label : str
        The label of every polygon.
    tolerance_px : float
        Outline simplification (Douglas-Peucker); 0 keeps the mask's pixel outline exactly,
        holes included (`mask_to_polygons`).
    min_area_px : float
        Regions and holes smaller than this are left out (specks, pinholes).
    on_result : callable, optional
        Called as ``on_result(outcome, image_path, detail)`` after each image, outcome one
        of "written", "skipped", "failed" (for progress output).
    max_pixels : int
        Larger images are not decoded but recorded as failed (None: the configured limit,
        `spraycv.io.images.configured_max_pixels`).

    Returns
    -------
    ProposeReport
        Per-image outcomes. An image that cannot be read or written is recorded as failed
        and the others are still labelled.
    """
    write = partial(
        _write_proposal,
        predictor=predictor,
        label=label,
        tolerance_px=tolerance_px,
        min_area_px=min_area_px,
        max_pixels=max_pixels,
    )
    return _propose_each(paths, write, overwrite, on_result)
