"""Evaluate any segmenter against truth: the report and its figures, the frames of truth any
kind provides (TruthFrame; rendered datasets here, line truth in line_truth.py), and on a
rendered dataset the mask metrics and cone angles vs its ground truth."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
from tqdm import tqdm

from spraycv.data.synth.styles import frame_style
from spraycv.geometry import ConeMeasurement
from spraycv.geometry.matching import MatchResult, angle_errors, match_to_truth
from spraycv.io.images import read_image, to_binary_mask
from spraycv.measure import Measurer, Reading, as_measurer
from spraycv.training.metrics import boundary_f1, iou_dice

Segmenter = Callable[[np.ndarray], np.ndarray]


@dataclass
class FrameResult:
    """One image: mask metrics (None: absent, as with line truth, which has no mask), nozzle
    matching and per-nozzle angle errors (deg)."""

    id: str
    iou: float | None
    dice: float | None
    boundary_f1: float | None
    seconds: float
    n_truth: int
    missed: int
    extra: int
    nozzles: list[dict[str, Any]] = field(default_factory=list)
    style: str = "standard"  # the renderer style of the frame (spraycv.data.synth.styles)
    flagged_false: int = 0  # readings of no nozzle that said they were unreliable


@dataclass
class EvalReport:
    frames: list[FrameResult] = field(default_factory=list)

    def angle_errors(self, key: str = "included") -> np.ndarray:
        """(M,) absolute errors of every matched nozzle with a finite, reliable angle."""
        e = [
            abs(n[f"{key}_error_deg"])
            for f in self.frames
            for n in f.nozzles
            if not n.get("unreliable")
        ]
        arr = np.asarray(e, dtype=float)
        return arr[np.isfinite(arr)]

    def summary(self) -> dict[str, float | None]:
        """The figures of the leaderboard and model card."""
        return summarise(self.frames)

    def by_style(self) -> dict[str, dict[str, float | None]]:
        """The same figures for each renderer style of the set, reported separately."""
        styles = sorted({f.style for f in self.frames})
        return {s: summarise([f for f in self.frames if f.style == s]) for s in styles}

    def write(self, out_dir: Path) -> None:
        """metrics.json (summary) and frames.jsonl (one line per image)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "metrics.json").write_text(json.dumps(self.summary(), indent=2) + "\n")
        styles = json.dumps(self.by_style(), indent=2)
        (out_dir / "metrics_by_style.json").write_text(styles + "\n")
        with (out_dir / "frames.jsonl").open("w") as fh:
            for frame in self.frames:
                fh.write(json.dumps(asdict(frame)) + "\n")


def _percentiles(errors: np.ndarray) -> tuple[float, float]:
    if not errors.size:
        return float("nan"), float("nan")
    return float(np.percentile(errors, 50)), float(np.percentile(errors, 95))


def _mean_present(frames: list[FrameResult], key: str) -> float | None:
    """The mean of a mask metric: NaN without frames, None (absent) when no frame has it."""
    if not frames:
        return float("nan")
    values = [v for f in frames if (v := getattr(f, key)) is not None]
    return float(np.mean(values)) if values else None


def summarise(frames: list[FrameResult]) -> dict[str, float | None]:
    """Mask and angle figures of a list of frames (NaN where they have nothing to say; the
    mask figures None where the truth has no mask)."""
    nan = float("nan")
    inc = EvalReport(frames).angle_errors()
    median, p95 = _percentiles(inc)
    n = max(len(frames), 1)
    return {
        "frames": float(len(frames)),
        "nozzles": float(sum(f.n_truth for f in frames)),
        "iou": _mean_present(frames, "iou"),
        "dice": _mean_present(frames, "dice"),
        "boundary_f1": _mean_present(frames, "boundary_f1"),
        "angle_mae_deg": float(inc.mean()) if inc.size else nan,
        "angle_median_deg": median,
        "angle_p95_deg": p95,
        "missed_nozzles": float(sum(f.missed for f in frames)),
        "extra_plumes": float(sum(f.extra for f in frames)),
        # read, but flagged unreliable instead of given an angle
        "unreliable_nozzles": float(
            sum(bool(z.get("unreliable")) for f in frames for z in f.nozzles)
        ),
        "flagged_false_plumes": float(sum(f.flagged_false for f in frames)),
        "frames_with_missed_frac": sum(f.missed > 0 for f in frames) / n,
        "frames_with_extra_frac": sum(f.extra > 0 for f in frames) / n,
        "seconds_per_image_median": float(np.median([f.seconds for f in frames]))
        if frames
        else nan,
    }


def read_records(dataset_dir: Path) -> list[dict[str, Any]]:
    """The renderer's labels.jsonl records of a dataset folder."""
    path = Path(dataset_dir) / "labels.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{dataset_dir}: labels.jsonl not found (not a rendered dataset)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def unmatched_counts(
    measurements: Sequence[ConeMeasurement], match: MatchResult
) -> tuple[int, int]:
    """(false plumes, flagged false plumes) of a frame: its readings of no nozzle, split by
    whether they said they were unreliable. A reading that says it cannot be trusted is
    neither a false plume nor an angle, whatever the truth (rendered or labelled lines)."""
    flagged = sum(bool(measurements[i].unreliable) for i in match.extra)
    return len(match.extra) - flagged, flagged


def evaluate_frame(
    record: dict[str, Any],
    image: np.ndarray,
    truth_mask: np.ndarray,
    segmenter: Segmenter | Measurer,
) -> tuple[FrameResult, Reading]:
    """Segment one image, measure it, and compare with its ground truth."""
    tic = time.perf_counter()
    reading = as_measurer(segmenter)(image)
    pred, measurements = reading.mask, reading.measurements
    seconds = time.perf_counter() - tic
    iou, dice = iou_dice(pred, truth_mask)
    truth = record["nozzles"]
    match = match_to_truth(measurements, truth)
    nozzles = []
    for pair in match.pairs:
        m, nz = measurements[pair.meas], truth[pair.gt]
        errs = angle_errors(m, nz)
        nozzles.append(
            {
                "gt_index": nz["index"],
                "nozzle_type": nz["nozzle_type"],
                "state": nz["state"],
                "included_true_deg": nz["included_angle_deg"],
                "included_deg": m.included_angle_deg,
                **{f"{k}_error_deg": v for k, v in errs.items()},
                "flags": ";".join(f.value for f in m.flags),
                "confidence": m.confidence,
                "unreliable": m.unreliable,
            }
        )
    extra, flagged_false = unmatched_counts(measurements, match)
    frame = FrameResult(
        id=str(record["id"]),
        iou=iou,
        dice=dice,
        boundary_f1=boundary_f1(pred, truth_mask),
        seconds=seconds,
        n_truth=len(match.pairs) + len(match.missed),
        missed=len(match.missed),
        extra=extra,
        nozzles=nozzles,
        style=frame_style(record),
        flagged_false=flagged_false,
    )
    return frame, reading


class TruthFrame(Protocol):
    """One frame of a folder of truth: rendered (RenderedFrame) or a labelled photo
    (spraycv.evaluation.line_truth.LabelledFrame). Evaluation and the worst-cases picture
    (spraycv.evaluation.plots.worst_cases) take any of them."""

    @property
    def id(self) -> str: ...

    def image(self) -> np.ndarray:
        """The (H, W[, 3]) uint8 image."""
        ...

    def evaluate(
        self, image: np.ndarray, segmenter: Segmenter | Measurer
    ) -> tuple[FrameResult, Reading]:
        """Read its image with `segmenter` and compare the reading with the truth."""
        ...

    def draw_truth(self, picture: np.ndarray) -> np.ndarray:
        """The truth drawn in green on a (H, W, 3) uint8 BGR picture of the image."""
        ...


@dataclass(frozen=True)
class RenderedFrame:
    """A frame of a rendered dataset: its labels.jsonl record, the image and mask it names."""

    folder: Path
    record: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.record["id"])

    def image(self) -> np.ndarray:
        return read_image(self.folder / self.record["image"])

    def truth_mask(self) -> np.ndarray:
        """The rendered (H, W) uint8 {0, 1} mask."""
        return to_binary_mask(read_image(self.folder / self.record["mask"]))

    def evaluate(
        self, image: np.ndarray, segmenter: Segmenter | Measurer
    ) -> tuple[FrameResult, Reading]:
        return evaluate_frame(self.record, image, self.truth_mask(), segmenter)

    def draw_truth(self, picture: np.ndarray) -> np.ndarray:
        """The outline of the rendered mask."""
        mode, method = cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
        contours, _ = cv2.findContours(self.truth_mask(), mode, method)
        return cv2.drawContours(picture, contours, -1, (0, 255, 0), 1)


def rendered_frames(dataset_dir: Path) -> list[RenderedFrame]:
    """The frames of a rendered dataset folder (images, masks, labels.jsonl), in order."""
    return [RenderedFrame(Path(dataset_dir), record) for record in read_records(dataset_dir)]


def evaluate_frames(
    frames: Sequence[TruthFrame], segmenter: Segmenter | Measurer, progress: bool = True
) -> EvalReport:
    """Run `segmenter` over frames of truth, rendered or labelled (TruthFrame), in order."""
    report = EvalReport()
    for frame in tqdm(frames, desc="evaluate", disable=not progress):
        result, _ = frame.evaluate(frame.image(), segmenter)
        report.frames.append(result)
    return report


def evaluate_dataset(
    segmenter: Segmenter | Measurer,
    dataset_dir: Path,
    limit: int | None = None,
    progress: bool = True,
) -> EvalReport:
    """Run `segmenter` over a rendered dataset folder (images, masks, labels.jsonl)."""
    return evaluate_frames(rendered_frames(dataset_dir)[:limit], segmenter, progress)
