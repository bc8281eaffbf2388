"""`measure` and `predict` print an unreliable reading's reason in place of its angle in
their tables (their JSON and CSV keep every field); `predict` closes a video with each
nozzle's spread. The measurements are constructed, so that each case is exact."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from spraycv.cli import measure as measure_cmd
from spraycv.cli import predict as predict_cmd
from spraycv.cli.app import app
from spraycv.cli.steadiness import VideoSteadiness
from spraycv.cli.table import TableColumn, cell
from spraycv.geometry import ConeMeasurement
from spraycv.measure import FileResult

runner = CliRunner()
MASK = np.zeros((32, 32), np.uint8)


def cone(angle: float, index: int = 0, apex=(16.0, 4.0), **kw) -> ConeMeasurement:
    half = angle / 2
    fields = {"confidence": 0.9, **kw}
    return ConeMeasurement(index, apex=apex, included_angle_deg=angle, half_angle_left_deg=half,
                           half_angle_right_deg=half, **fields)  # fmt: skip


DOUBT = {"unreliable": "low_edge_contrast", "confidence": 0.2}


@pytest.mark.parametrize(
    ("key", "reliable", "unreliable"),
    [
        ("included_angle_deg", "55.00", "unreliable: low_edge_contrast"),
        ("half_angle_left_deg", "27.50", "-"),
        ("half_angle_right_deg", "27.50", "-"),
        ("confidence", "0.90", "0.20"),  # not an angle: shown as it is
    ],
)
def test_the_reason_takes_the_angles_place(key: str, reliable: str, unreliable: str) -> None:
    column = TableColumn(key, key, "{:.2f}")
    assert cell(column, cone(55).to_dict()) == reliable
    assert cell(column, cone(55, **DOUBT).to_dict()) == unreliable


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """`measure` reads one file as two plumes, the second unreliable."""
    path = tmp_path / "frame.png"
    path.write_bytes(b"")
    result = FileResult(path, "image", MASK, MASK, [cone(55), cone(71.1, 1, **DOUBT)])
    monkeypatch.setattr(measure_cmd, "measure_file", lambda *a, **k: result)
    yield path


def test_measure_table_prints_the_reason(measured: Path) -> None:
    result = runner.invoke(app, ["measure", str(measured), "--segmenter", "classical"])
    assert result.exit_code == 0, result.output
    _, good, doubtful = result.stdout.splitlines()
    assert good.split()[1:3] == ["0", "55.00"]
    assert doubtful.split()[1:4] == ["1", "unreliable:", "low_edge_contrast"]
    assert "71.1" not in doubtful


def test_measure_json_keeps_every_field(measured: Path) -> None:
    result = runner.invoke(app, ["measure", "--json", str(measured), "--segmenter", "classical"])
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["included_angle_deg"], r["unreliable"], r["confidence"]) for r in rows] == [
        (55.0, "", 0.9),
        (71.1, "low_edge_contrast", 0.2),
    ]


def test_predict_table_prints_the_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    image = tmp_path / "frame.png"
    image.write_bytes(b"")
    result = FileResult(image, "image", MASK, MASK, [cone(55), cone(71.1, 1, **DOUBT)])
    monkeypatch.setattr(predict_cmd, "measure_file", lambda *a, **k: result)
    monkeypatch.setattr(predict_cmd, "load_pipeline", lambda *a: type("P", (), {"name": "m"}))
    out = tmp_path / "out"
    args = ["predict", str(image), "--out", str(out), "--quiet", "--no-overlays"]
    run = runner.invoke(app, args)
    assert run.exit_code == 0, run.output
    rows = {line.split()[1]: line for line in run.stdout.splitlines()[1:3]}
    assert "unreliable: low_edge_contrast" in rows["1"] and "71.1" not in rows["1"]
    assert "55.00" in rows["0"]
    records = [json.loads(line) for line in (out / "measurements.jsonl").read_text().splitlines()]
    assert [r["included_angle_deg"] for r in records] == [55.0, 71.1]  # the records keep it


def test_video_steadiness_skips_unreliable_frames() -> None:
    """Two nozzles over six frames: one steady with an unreliable frame among its readings,
    one unreliable throughout (a bracket, say): no angle, its reason instead."""
    steady = [55.0, 56.0, 54.0, 99.0, 55.0, 56.0]  # the 99 is the unreliable one
    video = VideoSteadiness("v.mp4", fps=5.0, frames_expected=6)
    for i, angle in enumerate(steady):
        doubt = DOUBT if angle == 99.0 else {}
        bracket = cone(70.0, 1, apex=(200.0, 4.0), unreliable="no_apex_support", confidence=0.1)
        video.add(i, [cone(angle, **doubt), bracket])
    nozzle, bracket = video.rows()
    assert nozzle["reliable"] == "5/6" and nozzle["unreliable"] == ""
    assert nozzle["angle_range_deg"] == pytest.approx(2.0)  # 54 to 56: the 99 is left out
    assert nozzle["angle_sd_deg"] == pytest.approx(np.std([55, 56, 54, 55, 56], ddof=1))
    assert nozzle["smoothed_angle_sd_deg"] < nozzle["angle_sd_deg"]
    assert bracket["reliable"] == "0/6" and bracket["included_angle_deg"] is None
    assert bracket["unreliable"] == "no_apex_support"
    assert cell(TableColumn("included", "included_angle_deg"), bracket) == (
        "unreliable: no_apex_support"
    )
