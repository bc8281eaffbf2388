"""Evaluate a segmenter on line truth: photos a person labelled with `spraycv label lines`
(spraycv/label/lines.py). Angles only: the included-angle error and the missed and extra
plumes. Line truth has no mask, so the mask metrics are absent (None), not zero.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spraycv.evaluation.heldout import FrameResult, read_records, unmatched_counts
from spraycv.geometry import ConeMeasurement
from spraycv.geometry.matching import angle_errors, match_to_truth
from spraycv.io.images import read_image, to_binary_mask
from spraycv.label.lines import LINES_FILE, LineTruthError, NozzleLines, load_lines, truth_nozzles
from spraycv.label.session import draw_nozzle
from spraycv.measure import Measurer, Reading, as_measurer

Segmenter = Callable[[np.ndarray], np.ndarray]
LINE_TRUTH_STYLE = "line_truth"  # FrameResult.style of labelled photos (not a renderer style)


def labelled_images(folder: Path) -> list[tuple[str, list[NozzleLines]]]:
    """(image key, nozzles) of every labelled photo of folder/lines.json; LineTruthError,
    naming the file and entry, when none is labelled or a labelled photo is missing."""
    path = Path(folder) / LINES_FILE
    labelled = load_lines(path).labelled()
    if not labelled:
        raise LineTruthError(f"{path}: no photo is labelled yet (every entry has nozzles: null)")
    missing = next((key for key, _ in labelled if not (Path(folder) / key).is_file()), None)
    if missing is not None:
        raise LineTruthError(f'{path}: images["{missing}"]: no such file in {folder}')
    return labelled


def _nozzle_row(meas: ConeMeasurement, nz: Mapping[str, Any], apex_dist_px: float) -> dict:
    errors = angle_errors(meas, nz)  # its half-angle errors are NaN: lines carry no axis
    return {
        "gt_index": nz["index"],
        "included_true_deg": nz["included_angle_deg"],
        "included_deg": meas.included_angle_deg,
        "included_error_deg": errors["included"],
        "apex_error_px": apex_dist_px,
        "flags": ";".join(f.value for f in meas.flags),
        "confidence": meas.confidence,
        "unreliable": meas.unreliable,
    }


def evaluate_labelled_image(
    key: str, image: np.ndarray, nozzles: Sequence[NozzleLines], segmenter: Segmenter | Measurer
) -> tuple[FrameResult, Reading]:
    """Read one (H, W[, 3]) uint8 photo and compare it with its labelled nozzles, paired
    with the measured plumes by apex distance (spraycv.geometry.matching)."""
    tic = time.perf_counter()
    reading = as_measurer(segmenter)(image)
    seconds = time.perf_counter() - tic
    truth = truth_nozzles(nozzles)
    match = match_to_truth(reading.measurements, truth)
    rows = [
        _nozzle_row(reading.measurements[p.meas], truth[p.gt], p.apex_dist_px) for p in match.pairs
    ]
    extra, flagged_false = unmatched_counts(reading.measurements, match)
    frame = FrameResult(
        id=key,
        iou=None,
        dice=None,
        boundary_f1=None,
        seconds=seconds,
        n_truth=len(match.pairs) + len(match.missed),
        missed=len(match.missed),
        extra=extra,
        nozzles=rows,
        style=LINE_TRUTH_STYLE,
        flagged_false=flagged_false,
    )
    return frame, reading


@dataclass(frozen=True)
class LabelledFrame:
    """A photo labelled with `spraycv label lines` (a spraycv.evaluation.heldout.TruthFrame):
    its key in folder/lines.json, which is its path in the folder, and its nozzles."""

    folder: Path
    id: str
    nozzles: Sequence[NozzleLines]

    def image(self) -> np.ndarray:
        return read_image(self.folder / self.id)

    def evaluate(
        self, image: np.ndarray, segmenter: Segmenter | Measurer
    ) -> tuple[FrameResult, Reading]:
        return evaluate_labelled_image(self.id, image, self.nozzles, segmenter)

    def draw_truth(self, picture: np.ndarray) -> np.ndarray:
        """The labelled boundary lines."""
        for i, nozzle in enumerate(self.nozzles):
            draw_nozzle(picture, nozzle, (0, 255, 0), f"truth {i + 1}")
        return picture


def labelled_frames(folder: Path) -> list[LabelledFrame]:
    """The labelled photos of folder/lines.json, in its order; LineTruthError as
    labelled_images says."""
    return [LabelledFrame(Path(folder), key, nozzles) for key, nozzles in labelled_images(folder)]


def _fingerprint(image: np.ndarray) -> bytes:
    return hashlib.sha1(np.ascontiguousarray(image).tobytes()).digest()


class TruthMasks:
    """A perfect "segmenter" for a rendered dataset: it returns each frame's rendered mask,
    recognised by its pixels, so the geometry alone is what an evaluation then measures."""

    def __init__(self, dataset_dir: Path, limit: int | None = None):
        dataset_dir = Path(dataset_dir)
        self._masks = {
            _fingerprint(read_image(dataset_dir / r["image"])): dataset_dir / r["mask"]
            for r in read_records(dataset_dir)[:limit]
        }

    def __call__(self, image: np.ndarray) -> np.ndarray:
        """(H, W[, 3]) uint8 frame of the dataset -> its (H, W) uint8 {0, 1} mask."""
        path = self._masks.get(_fingerprint(image))
        if path is None:
            raise KeyError("the image is not a frame of this rendered dataset")
        return to_binary_mask(read_image(path))
