"""`spraycv calibrate` (both methods, writing a config, errors) and `measure --mm-per-px`."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from calib_helpers import draw_checkerboard
from typer.testing import CliRunner

from spraycv.cli.app import app

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _scales(stdout: str) -> tuple[float, float]:
    """(mm/px, px/mm) from the command's output lines `mm/px: ...` and `px/mm: ...`."""
    lines = (line.split(": ", 1) for line in stdout.splitlines())
    values = {k: float(v) for k, v in lines if k in ("mm/px", "px/mm")}
    return values["mm/px"], values["px/mm"]


@pytest.fixture
def board(tmp_path: Path) -> Path:
    """A 320 x 240 picture of a 6 x 5-square board with 16-px squares (5 x 4 inner corners)."""
    image = np.full((240, 320, 3), 128, np.uint8)
    draw_checkerboard(image, (70.4, 40.2), 16.0, (6, 5))
    path = tmp_path / "board.png"
    cv2.imwrite(str(path), image)
    return path


def test_points(board: Path) -> None:
    result = runner.invoke(
        app, ["calibrate", str(board), "--points", "10,20,40,60", "--distance-mm", "20"]
    )
    assert result.exit_code == 0, result.output
    mm_per_px, px_per_mm = _scales(result.stdout)
    assert mm_per_px == pytest.approx(0.4) and px_per_mm == pytest.approx(2.5)


def test_checkerboard_written_into_a_config(board: Path, tmp_path: Path) -> None:
    config = tmp_path / "daemon.yaml"
    config.write_text("sources:\n- name: cam1\n  url: rtsp://cam1\n")
    args = ["calibrate", str(board), "--checkerboard", "5x4", "--square-mm", "8"]
    result = runner.invoke(app, [*args, "--config", str(config), "--source", "cam1"])
    assert result.exit_code == 0, result.output
    mm_per_px, _ = _scales(result.stdout)
    assert mm_per_px == pytest.approx(0.5, rel=3e-3)
    assert "updated" in result.stdout
    [entry] = yaml.safe_load(config.read_text())["sources"]
    assert entry["url"] == "rtsp://cam1" and entry["mm_per_px"] == pytest.approx(mm_per_px, 1e-5)

    result = runner.invoke(app, [*args, "--config", str(config), "--source", "cam2"])
    assert result.exit_code == 0 and "created the entry" in result.stdout
    assert [s["name"] for s in yaml.safe_load(config.read_text())["sources"]] == ["cam1", "cam2"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ([], 2, "either --points with --distance-mm or --checkerboard"),
        (["--points", "1,2,3,4"], 2, "--points needs --distance-mm"),
        (["--checkerboard", "5x4"], 2, "--checkerboard needs --square-mm"),
        (
            ["--points", "1,2,3,4", "--distance-mm", "5", "--checkerboard", "5x4"],
            2,
            "either --points",
        ),
        (["--points", "1,2,3", "--distance-mm", "5"], 2, "x1,y1,x2,y2"),
        (["--checkerboard", "5by4", "--square-mm", "5"], 2, "COLSxROWS"),
        (["--points", "1,2,3,4", "--distance-mm", "5", "--config", "c.yaml"], 2, "go together"),
        (["--points", "1,2,1,2", "--distance-mm", "5"], 1, "coincide"),
        (["--points", "1,2,3,4", "--distance-mm", "-5"], 1, "finite length > 0"),
        (["--points", "1,2,500,4", "--distance-mm", "5"], 1, "outside the 320x240 image"),
        (["--checkerboard", "7x4", "--square-mm", "5"], 1, "no checkerboard with 7x4 inner"),
        (["--checkerboard", "2x4", "--square-mm", "5"], 1, "at least 3x3"),
    ],
)
def test_errors(board: Path, args: list[str], code: int, message: str) -> None:
    result = runner.invoke(app, ["calibrate", str(board), *args])
    assert result.exit_code == code, result.output
    assert message in " ".join(result.output.replace("│", " ").split())  # rich boxes wrap


def test_unreadable_image_and_bad_config(board: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["calibrate", str(tmp_path / "nope.png"), "--points", "1,2,3,4", "--distance-mm", "5"]
    )
    assert result.exit_code == 1 and "no such file" in result.output
    config = tmp_path / "bad.yaml"
    config.write_text("- not a mapping\n")
    args = ["--points", "1,2,3,4", "--distance-mm", "5", "--config", str(config)]
    result = runner.invoke(app, ["calibrate", str(board), *args, "--source", "cam"])
    assert result.exit_code == 2 and "top level must be a mapping" in result.output  # the config


def test_measure_reports_mm_with_the_scale() -> None:
    record = json.loads((REPO / "data/samples/labels.jsonl").read_text().splitlines()[0])
    mask = str(REPO / "data/samples" / record["mask"])
    args = ["measure", "--json", "--segmenter", "classical", "--mm-per-px", "0.42", mask]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows
    for row in rows:
        assert row["length_mm"] == pytest.approx(row["length_px"] * 0.42)
        assert row["area_mm2"] == pytest.approx(row["area_px"] * 0.42**2)
