"""`measure` and `predict` batches: one bad input never stops the others (issue 12)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from ffmpeg_camera import lavfi_video
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.cli.errors import ExitCode

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "data" / "samples" / "images" / "000000.jpg"
GOOD_MASK = REPO / "data" / "samples" / "masks" / "000000.png"
runner = CliRunner()

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _write(path: Path, image: np.ndarray) -> str:
    assert cv2.imwrite(str(path), image)
    return str(path)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory, tiny_checkpoint) -> Path:
    return tiny_checkpoint(tmp_path_factory.mktemp("batch"))[0]


def test_predict_goes_on_past_degenerate_images(weights: Path, tmp_path: Path):
    dot = _write(tmp_path / "dot.png", np.zeros((1, 1, 3), np.uint8))
    line = _write(tmp_path / "line.png", np.zeros((1, 5000, 3), np.uint8))
    out = tmp_path / "out"
    args = ["predict", dot, str(GOOD), line, "--weights", str(weights), "--out", str(out)]
    result = runner.invoke(app, [*args, "--quiet"])
    assert result.exit_code == ExitCode.INPUTS_FAILED, result.output
    assert result.stderr.splitlines() == [
        f"error: {dot}: 1 x 1 px is too small to measure (at least 8 px a side)",
        f"error: {line}: 5000 x 1 px is too small to measure (at least 8 px a side)",
        "error: 2 of 3 inputs could not be measured",
    ]  # named, and no word of "mask" for a photo
    assert (out / "overlays" / "000000_overlay.png").is_file()  # the good one, after the bad


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg makes the video")
def test_predict_says_a_video_was_cut_short_and_keeps_its_frames(weights: Path, tmp_path: Path):
    whole = lavfi_video(tmp_path / "v.avi", "testsrc=size=64x48:rate=12")
    cut = tmp_path / "cut.avi"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    out = tmp_path / "out"
    args = ["predict", str(cut), "--weights", str(weights), "--out", str(out), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.INPUTS_FAILED, result.output
    read = len({row["frame"] for row in _rows(out / "measurements.jsonl")})
    assert 0 < read < 12
    assert f"error: {cut}: the video is cut short: {read} of the 12 frames" in result.stderr


def test_a_grey_photo_with_few_levels_is_read_as_a_photo_and_says_so(tmp_path: Path):
    levels = np.array([0, 17, 200], np.uint8)[np.indices((64, 64)).sum(axis=0) % 3]
    path = _write(tmp_path / "levels.png", levels)
    args = ["measure", path, "--segmenter", "classical", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.OK, result.output
    assert result.stderr == (
        f"warning: {path}: read as a photo, not a mask: one channel with 3 grey levels "
        "(0, 17, 200), and a mask holds only 0/1 or 0/255 (--kind mask reads it as a mask)\n"
    )
    as_mask = runner.invoke(app, [*args, "--kind", "mask"])
    assert f"warning: {path}: not a binary mask (values 0, 17, 200)" in as_mask.stderr


def test_an_under_exposed_photo_is_measured_and_says_plumes_may_be_missed(tmp_path: Path):
    """A frame whose brightest pixels stay dark: its readings are given with a warning
    that names it (no plume there does not mean no spray); a well-exposed one has none."""
    yy, xx = np.mgrid[0:128, 0:128]
    wedge = ((np.abs(xx - 64) < (yy - 10) * 0.5) & (yy > 10))[..., None].repeat(3, axis=2)
    dim = _write(tmp_path / "dim.png", np.where(wedge, 40, 5).astype(np.uint8))
    lit = _write(tmp_path / "lit.png", np.where(wedge, 220, 20).astype(np.uint8))
    args = ["measure", dim, lit, "--segmenter", "classical", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.OK, result.output
    assert result.stderr.splitlines() == [
        f"warning: {dim}: under-exposed (the brightest 0.2 % of pixels reach 40 of 255 grey "
        "levels): plumes may be missed, so no plume here does not mean no spray; raise the "
        "exposure or gain"
    ]
    assert {json.loads(line)["source"] for line in result.stdout.splitlines()} == {dim, lit}


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg makes the video")
def test_a_dark_video_warns_once_and_is_measured(weights: Path, tmp_path: Path):
    video = lavfi_video(tmp_path / "dark.avi", "color=c=0x141414:size=64x48:rate=12")
    out = tmp_path / "out"
    args = ["predict", str(video), "--weights", str(weights), "--out", str(out), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == ExitCode.OK, result.output
    warnings = [line for line in result.stderr.splitlines() if "under-exposed" in line]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {video}, frame 0: under-")


def test_measure_refuses_urls_and_keeps_them_whole():
    url = "http://127.0.0.1:9/a//x.mjpg"
    result = runner.invoke(app, ["measure", url, str(GOOD_MASK), "--json"])
    assert result.exit_code == ExitCode.INPUTS_FAILED
    assert result.stderr.splitlines()[0] == (
        f"error: {url}: `spraycv measure` reads image and mask files; "
        "`spraycv predict` reads streams and URLs"
    )
    assert json.loads(result.stdout.splitlines()[0])["source"] == str(GOOD_MASK)


def test_max_pixels_refuses_large_images_and_can_be_raised():
    args = ["measure", str(GOOD_MASK), "--json"]
    small = runner.invoke(app, [*args, "--max-pixels", "1000"])
    assert small.exit_code == ExitCode.INPUTS_FAILED
    assert "512 x 512 px (0.3 MP) is over the limit of 0.001 MP" in small.stderr
    raised = runner.invoke(app, args, env={"SPRAYCV_MAX_IMAGE_PIXELS": "262144"})
    assert raised.exit_code == ExitCode.OK, raised.output
