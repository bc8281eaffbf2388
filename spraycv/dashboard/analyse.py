"""The Analyse page's work: check uploads, decode images and sample videos, measure, tabulate."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
import pandas as pd

from spraycv.geometry import ConeMeasurement, MeasureHints, measure_cones
from spraycv.io.images import IMAGE_SUFFIXES
from spraycv.measure import segment_image, with_apex_prior
from spraycv.paths import SAMPLES_DIR
from spraycv.viz.overlay import draw_overlay

VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg")
SAMPLE_IMAGES_DIR = SAMPLES_DIR / "images"
SAMPLE_VIDEO = SAMPLES_DIR / "video.mp4"

Segmenter = Callable[[np.ndarray], np.ndarray]  # (H, W, 3) uint8 BGR -> (H, W) {0, 1} mask


class UploadError(ValueError):
    """An upload the dashboard cannot measure; the message is shown to the operator as is."""


@dataclass(frozen=True)
class Upload:
    name: str
    kind: Literal["image", "video"]
    data: bytes


def accepted_types() -> str:
    return ", ".join(s.lstrip(".") for s in IMAGE_SUFFIXES + VIDEO_SUFFIXES)


def check_upload(name: str, data: bytes, max_bytes: int) -> Upload:
    """Classify an upload as an image or a video, or raise UploadError saying why not.

    The suffix decides the kind; an image must also decode (a renamed file is caught here,
    a video when it is opened).
    """
    suffix = Path(name).suffix.lower()
    if not data:
        raise UploadError(f"{name}: the file is empty")
    if len(data) > max_bytes:
        raise UploadError(
            f"{name}: {len(data) / 2**20:.1f} MB is over the upload limit of "
            f"{max_bytes / 2**20:.3g} MB (SPRAYCV_DASHBOARD_MAX_UPLOAD_MB)"
        )
    if suffix in VIDEO_SUFFIXES:
        return Upload(name, "video", data)
    if suffix in IMAGE_SUFFIXES:
        decode_image(data, name)  # raises if it is not really an image
        return Upload(name, "image", data)
    raise UploadError(f"{name}: not an image or a video (accepted: {accepted_types()})")


def decode_image(data: bytes, name: str = "image") -> np.ndarray:
    """Encoded bytes -> (H, W, 3) uint8 BGR, as cv2.imread would give for a colour file."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise UploadError(f"{name}: not a readable image (corrupt or unsupported format)")
    return image


def sample_video(data: bytes, name: str, max_frames: int) -> list[tuple[int, np.ndarray]]:
    """Up to max_frames (frame index, BGR image) pairs spread evenly over a video.

    OpenCV reads videos from files only, so the bytes go to a temporary file first.
    """
    suffix = Path(name).suffix.lower() or ".mp4"
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        tmp.write(data)
        tmp.flush()
        cap = cv2.VideoCapture(tmp.name)
        try:
            if not cap.isOpened():
                raise UploadError(f"{name}: not a readable video (corrupt or unsupported codec)")
            frames = _read_spread(cap, max_frames)
        finally:
            cap.release()
    if not frames:
        raise UploadError(f"{name}: the video has no readable frame")
    return frames


def _read_spread(cap: cv2.VideoCapture, max_frames: int) -> list[tuple[int, np.ndarray]]:
    count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    if count <= 0:  # unknown length (some containers): the first frames then
        wanted = set(range(max_frames))
        count = max_frames
    else:
        wanted = {int(i) for i in np.linspace(0, count - 1, min(max_frames, count))}
    frames = []
    for index in range(count):
        if not cap.grab():  # grab without decoding: cheap for the frames skipped
            break
        if index in wanted:
            ok, image = cap.retrieve()
            if ok and image is not None:
                frames.append((index, image))
    return frames


@dataclass
class Analysed:
    """One measured image (a file, or one frame of a video)."""

    name: str
    frame: int | None  # None for an image file
    image: np.ndarray  # (H, W, 3) uint8 BGR
    mask: np.ndarray  # (H, W) uint8 {0, 1}
    measurements: list[ConeMeasurement] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name if self.frame is None else f"{self.name} · frame {self.frame}"

    def overlay_rgb(self) -> np.ndarray:
        """The annotated picture, RGB for st.image."""
        bgr = draw_overlay(self.image, self.mask, self.measurements)
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)

    @property
    def angles_text(self) -> str:
        angles = [f"{m.included_angle_deg:.1f}°" for m in self.measurements if m.ok]
        return ", ".join(angles) if angles else "no cone measured"


def analyse_upload(
    upload: Upload,
    segmenter: Segmenter,
    max_frames: int = 12,
    hints: MeasureHints | None = None,
) -> list[Analysed]:
    """Segment and measure an image, or up to max_frames frames of a video.

    hints: the camera's calibration (mm_per_px, nozzle height and spacing) for mm outputs.
    """
    if upload.kind == "image":
        frames: Sequence[tuple[int | None, np.ndarray]] = [
            (None, decode_image(upload.data, upload.name))
        ]
    else:
        frames = sample_video(upload.data, upload.name, max_frames)
    out = []
    for index, image in frames:
        mask, apexes = segment_image(segmenter, image)
        measured = measure_cones(mask, hints=with_apex_prior(hints, apexes))
        out.append(Analysed(upload.name, index, image, mask, measured))
    return out


FIRST_COLUMNS = ["file", "frame", "index", "included_angle_deg", "half_angle_left_deg",
                 "half_angle_right_deg", "tilt_deg", "length_px", "length_mm", "area_px",
                 "area_mm2", "coverage_width_mm", "flags"]  # fmt: skip


def measurement_table(results: Iterable[Analysed]) -> pd.DataFrame:
    """One row per measured plume: file, frame, then ConeMeasurement.to_dict()."""
    rows: list[dict[str, Any]] = [
        {"file": r.name, "frame": r.frame, **m.to_dict()} for r in results for m in r.measurements
    ]
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=FIRST_COLUMNS)
    df["frame"] = df["frame"].astype("Int64")  # nullable: images have no frame number
    return df[FIRST_COLUMNS + [c for c in df.columns if c not in FIRST_COLUMNS]]


def bundled_samples() -> list[Path]:
    """The sample images and the sample video shipped in data/samples."""
    images = sorted(p for p in SAMPLE_IMAGES_DIR.glob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    return images + ([SAMPLE_VIDEO] if SAMPLE_VIDEO.is_file() else [])


def load_sample(path: Path) -> Upload:
    kind: Literal["image", "video"] = "video" if path.suffix.lower() in VIDEO_SUFFIXES else "image"
    return Upload(path.name, kind, path.read_bytes())
