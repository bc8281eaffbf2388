"""The Analyse page's work: check uploads, decode images and sample videos, measure, tabulate."""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np
import pandas as pd

from spraycv.config.daemon import SpecRule
from spraycv.geometry import ConeMeasurement, MeasureHints
from spraycv.io import images
from spraycv.io.exposure import exposure_note
from spraycv.io.images import IMAGE_SUFFIXES, ImageReadError, inspect_image
from spraycv.io.video import VIDEO_SUFFIXES, Video, VideoReadError, open_video
from spraycv.measure import Measurer, as_measurer, is_no_plume
from spraycv.paths import SAMPLES_DIR
from spraycv.spec import check_reading
from spraycv.viz.overlay import bgr_to_rgb_inplace, draw_overlay

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


def _read_within(name: str, data: bytes | BinaryIO, max_bytes: int) -> bytes:
    """The upload's bytes, its size checked first: an over-limit file is never copied."""
    size = len(data) if isinstance(data, bytes) else data.seek(0, io.SEEK_END)
    if not size:
        raise UploadError(f"{name}: the file is empty")
    if size > max_bytes:
        raise UploadError(
            f"{name}: {size / 2**20:.1f} MB is over the upload limit of "
            f"{max_bytes / 2**20:.3g} MB (SPRAYCV_DASHBOARD_MAX_UPLOAD_MB)"
        )
    if isinstance(data, bytes):
        return data
    data.seek(0)
    return data.read()


def check_upload(
    name: str, data: bytes | BinaryIO, max_bytes: int, max_pixels: int | None = None
) -> Upload:
    """Classify an upload (bytes, or a file such as Streamlit's UploadedFile) as an image or a
    video, or raise UploadError saying why not.

    The suffix decides the kind; an image's header must also pass the image limits (nothing
    is decoded here), a video is checked when it is opened.
    """
    suffix = Path(name).suffix.lower()
    raw = _read_within(name, data, max_bytes)
    if suffix in VIDEO_SUFFIXES:
        return Upload(name, "video", raw)
    if suffix not in IMAGE_SUFFIXES:
        raise UploadError(f"{name}: not an image or a video (accepted: {accepted_types()})")
    try:
        inspect_image(raw, name, max_pixels)  # a renamed or oversized file is caught here
    except ImageReadError as exc:
        raise UploadError(str(exc)) from None
    return Upload(name, "image", raw)


def decode_image(data: bytes, name: str = "image", max_pixels: int | None = None) -> np.ndarray:
    """Encoded bytes -> (H, W, 3) uint8 BGR, as cv2.imread would give for a colour file
    (EXIF orientation applied), within the image limits."""
    try:
        return images.decode_image(data, name, max_pixels, colour=True)
    except ImageReadError as exc:
        raise UploadError(str(exc)) from None


def sample_video(
    data: bytes, name: str, max_frames: int, max_pixels: int | None = None
) -> tuple[list[tuple[int, np.ndarray]], str | None]:
    """Up to max_frames (frame index, BGR image) pairs spread evenly over a video, and a note
    when the video ends before the frame count its container announces.

    OpenCV reads videos from files only, so the bytes go to a temporary file first.
    """
    suffix = Path(name).suffix.lower() or ".mp4"
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        tmp.write(data)
        tmp.flush()
        try:
            video = open_video(tmp.name, max_pixels, name=name)
        except VideoReadError as exc:
            raise UploadError(str(exc)) from None
        try:
            frames, read = _read_spread(video, max_frames)
        finally:
            video.release()
    if not frames:
        raise UploadError(f"{name}: the video has no readable frame")
    return frames, video.shortfall(read)


def _read_spread(video: Video, max_frames: int) -> tuple[list[tuple[int, np.ndarray]], int]:
    """The frames wanted, and how many frames could be read (grabbed) in all."""
    count = video.announced
    if count <= 0:  # unknown length (some containers): the first frames then
        wanted = set(range(max_frames))
        count = max_frames
    else:
        wanted = {int(i) for i in np.linspace(0, count - 1, min(max_frames, count))}
    frames = []
    read = 0
    for index in range(count):
        if not video.capture.grab():  # grab without decoding: cheap for the frames skipped
            break
        read += 1
        if index in wanted:
            ok, image = video.capture.retrieve()
            if ok and image is not None:
                frames.append((index, image))
    return frames, read


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
        return bgr_to_rgb_inplace(bgr)  # no second 60 MB copy of a 20 MP photo

    @property
    def cones(self) -> int:
        """The plumes read, trusted or not (a frame's "no plume" reading is none)."""
        return sum(not is_no_plume(m) for m in self.measurements)

    @property
    def angles_text(self) -> str:
        """The trusted angles, and how many readings are not to be trusted (no number)."""
        angles = [f"{m.included_angle_deg:.1f}°" for m in self.measurements if m.reliable]
        doubtful = sum(m.ok and not m.reliable for m in self.measurements)
        parts = angles + ([f"{doubtful} unreliable"] if doubtful else [])
        return ", ".join(parts) if parts else "no cone measured"


@dataclass
class Analysis:
    """An upload's measured images, and warnings for the operator (a video cut short)."""

    results: list[Analysed] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def analyse_upload(
    upload: Upload,
    segmenter: Segmenter | Measurer,
    max_frames: int = 12,
    hints: MeasureHints | None = None,
    max_pixels: int | None = None,
) -> Analysis:
    """Segment and measure an image, or up to max_frames frames of a video.

    hints: the camera's calibration (mm_per_px, nozzle height and spacing) for mm outputs.
    Raises UploadError, naming the file, when it cannot be decoded or measured.
    """
    analysis = Analysis()
    if upload.kind == "image":
        frames: Sequence[tuple[int | None, np.ndarray]] = [
            (None, decode_image(upload.data, upload.name, max_pixels))
        ]
    else:
        frames, note = sample_video(upload.data, upload.name, max_frames, max_pixels)
        analysis.warnings += [note] if note else []
    measurer = as_measurer(segmenter, hints)
    notes = (exposure_note(image, _frame_name(upload.name, i)) for i, image in frames)
    dim = next((note for note in notes if note), None)  # the first dark or flat frame speaks
    analysis.warnings += [dim] if dim else []
    for index, image in frames:
        try:
            reading = measurer(image)
        except ValueError as exc:  # the geometry's MaskError, a hint it cannot use
            raise UploadError(f"{upload.name}: {exc}") from None
        analysis.results.append(
            Analysed(upload.name, index, image, reading.mask, reading.measurements)
        )
    return analysis


def _frame_name(name: str, index: int | None) -> str:
    return name if index is None else f"{name}, frame {index}"


# unreliable and confidence next to the angle: a doubtful reading says so where it is read
FIRST_COLUMNS = ["file", "frame", "index", "included_angle_deg", "unreliable", "confidence",
                 "half_angle_left_deg", "half_angle_right_deg", "tilt_deg", "length_px",
                 "length_mm", "area_px", "area_mm2", "coverage_width_mm", "flags"]  # fmt: skip
SPEC_COLUMNS = ["spec_status", "spec_deviation_deg"]  # after the angle and its trust


def measurement_table(results: Iterable[Analysed], rule: SpecRule | None = None) -> pd.DataFrame:
    """One row per measured plume: file, frame, then ConeMeasurement.to_dict(); with a spec,
    each reading checked against it (`spec_status`, `spec_deviation_deg`) after its angle."""
    checked = (lambda m: check_reading(rule, m)) if rule else (lambda m: {})
    rows: list[dict[str, Any]] = [
        {"file": r.name, "frame": r.frame, **m.to_dict(), **checked(m)}
        for r in results
        for m in r.measurements
    ]
    first = FIRST_COLUMNS[:5] + (SPEC_COLUMNS if rule else []) + FIRST_COLUMNS[5:]
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=first)
    df["frame"] = df["frame"].astype("Int64")  # nullable: images have no frame number
    return df[first + [c for c in df.columns if c not in first]]


def bundled_samples() -> list[Path]:
    """The sample images and the sample video shipped in data/samples."""
    images = sorted(p for p in SAMPLE_IMAGES_DIR.glob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    return images + ([SAMPLE_VIDEO] if SAMPLE_VIDEO.is_file() else [])


def load_sample(path: Path) -> Upload:
    kind: Literal["image", "video"] = "video" if path.suffix.lower() in VIDEO_SUFFIXES else "image"
    return Upload(path.name, kind, path.read_bytes())
