"""The dashboard's uploads: what Analyse accepts, how it samples a video, and its limits."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from dashboard_support import SAMPLE_VIDEO, sample_images
from ffmpeg_camera import lavfi_video

from spraycv.dashboard import analyse, settings
from spraycv.segment.classical import segment_classical

SAMPLE = sample_images()[0]


@pytest.mark.parametrize(
    ("name", "data", "limit", "kind", "error"),
    [
        ("a.jpg", SAMPLE.read_bytes(), 10**7, "image", None),
        ("A.JPEG", SAMPLE.read_bytes(), 10**7, "image", None),
        ("clip.mp4", SAMPLE_VIDEO.read_bytes(), 10**7, "video", None),
        ("notes.txt", b"hello", 10**7, None, "not an image or a video"),
        ("noext", SAMPLE.read_bytes(), 10**7, None, "not an image or a video"),
        ("broken.png", b"\x89PNG\r\n\x1a\n broken", 10**7, None, "not a readable image"),
        ("empty.jpg", b"", 10**7, None, "the file is empty"),
        ("a.jpg", SAMPLE.read_bytes(), 1000, None, "over the upload limit"),
    ],
)
def test_check_upload(name: str, data: bytes, limit: int, kind: str | None, error: str | None):
    if error is None:
        assert analyse.check_upload(name, data, limit).kind == kind
    else:
        with pytest.raises(analyse.UploadError, match=error):
            analyse.check_upload(name, data, limit)


@pytest.mark.parametrize(("max_frames", "expected"), [(1, [0]), (3, [0, 17, 35]), (99, None)])
def test_sample_video_spreads_frames(max_frames: int, expected: list[int] | None) -> None:
    frames, cut_short = analyse.sample_video(SAMPLE_VIDEO.read_bytes(), "v.mp4", max_frames)
    assert cut_short is None
    indices = [i for i, _ in frames]
    assert indices == (expected if expected is not None else list(range(36)))
    assert frames[0][1].shape == (480, 640, 3)


def test_sample_video_rejects_a_file_that_is_not_a_video() -> None:
    with pytest.raises(analyse.UploadError, match="not a readable video"):
        analyse.sample_video(b"not a video at all", "v.mp4", 3)


# -- upload limits (issue 12) ---------------------------------------------------------------
class _NeverRead(io.BytesIO):
    """An upload that fails the test if its bytes are read: its size must decide first."""

    def read(self, *args) -> bytes:
        raise AssertionError("an upload over the limit was read")


def test_an_upload_over_the_byte_limit_is_never_read() -> None:
    with pytest.raises(analyse.UploadError, match="over the upload limit"):
        analyse.check_upload("big.jpg", _NeverRead(b"x" * 5000), max_bytes=1000)


def test_an_upload_over_the_pixel_limit_is_refused_from_its_header() -> None:
    import cv2
    import numpy as np

    data = cv2.imencode(".png", np.zeros((100, 300), np.uint8))[1].tobytes()
    assert analyse.check_upload("a.png", io.BytesIO(data), 10**6, max_pixels=30_000).kind == "image"
    with pytest.raises(analyse.UploadError, match=r"a.png: 300 x 100 px .* over the limit"):
        analyse.check_upload("a.png", io.BytesIO(data), 10**6, max_pixels=29_999)
    with pytest.raises(analyse.UploadError, match=r"a.png: 300 x 100 px .* over the limit"):
        analyse.analyse_upload(analyse.Upload("a.png", "image", data), None, max_pixels=29_999)


def test_an_upload_too_small_to_measure_is_one_message() -> None:
    import cv2
    import numpy as np

    data = cv2.imencode(".png", np.zeros((1, 5000, 3), np.uint8))[1].tobytes()
    with pytest.raises(analyse.UploadError, match=r"line\.png: 5000 x 1 px is too small"):
        analyse.check_upload("line.png", data, 10**6)


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg makes the video")
def test_a_cut_video_upload_is_measured_with_a_warning(tmp_path: Path) -> None:
    whole = lavfi_video(tmp_path / "v.avi", "testsrc=size=64x48:rate=12")
    data = whole.read_bytes()
    frames, cut_short = analyse.sample_video(data[: len(data) // 2], "cut.avi", 12)
    assert 0 < len(frames) < 12
    assert cut_short == (
        f"cut.avi: the video is cut short: {len(frames)} of the 12 frames its container "
        "announces could be read"
    )


def test_the_limits_come_from_the_environment(monkeypatch) -> None:
    from spraycv.dashboard.launch import dashboard_command
    from spraycv.io.images import MAX_IMAGE_PIXELS

    monkeypatch.delenv("SPRAYCV_MAX_IMAGE_PIXELS", raising=False)
    assert settings.load_settings().max_pixels == MAX_IMAGE_PIXELS  # the CLI's default
    env = {"SPRAYCV_MAX_IMAGE_PIXELS": "30000000", "SPRAYCV_DASHBOARD_MAX_UPLOAD_MB": "5.5"}
    assert settings.load_settings(env).max_pixels == 30_000_000
    command = dashboard_command(8501, env)
    assert command[command.index("--server.maxUploadSize") + 1] == "6"  # whole MB, rounded up


def test_a_flat_upload_counts_no_cone_and_says_why() -> None:
    """A white frame: its one "no plume" reading is no cone, and a warning names the file;
    on the bundled sample every reading is a cone."""
    import cv2

    data = cv2.imencode(".png", np.full((120, 160, 3), 255, np.uint8))[1].tobytes()
    flat = analyse.analyse_upload(analyse.Upload("white.png", "image", data), segment_classical)
    assert [r.cones for r in flat.results] == [0] and len(flat.results[0].measurements) == 1
    (warning,) = flat.warnings
    assert warning.startswith("white.png: a flat frame (its brightness spans fewer than 8 ")
    lit = analyse.analyse_upload(analyse.load_sample(SAMPLE), segment_classical)
    (result,) = lit.results
    assert result.cones == len(result.measurements) >= 1


def test_an_under_exposed_upload_is_measured_with_one_warning() -> None:
    """Analyse measures a dark photo and warns once that plumes may be missed in it; the
    bundled sample, well exposed, gets no warning."""
    import cv2

    dark = cv2.imread(str(SAMPLE)) // 8  # the same scene, its brightest pixels near 30
    data = cv2.imencode(".png", dark)[1].tobytes()
    analysis = analyse.analyse_upload(analyse.Upload("dark.png", "image", data), segment_classical)
    assert len(analysis.results) == 1
    (warning,) = analysis.warnings
    assert warning.startswith("dark.png: under-exposed (the brightest 0.2 % of pixels reach ")
    lit = analyse.analyse_upload(analyse.load_sample(SAMPLE), segment_classical)
    assert lit.warnings == []
