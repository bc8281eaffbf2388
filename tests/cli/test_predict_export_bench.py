from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.runtime.bench import side_by_side
from spraycv.runtime.onnx_backend import OnnxPredictor
from spraycv.runtime.processing import ModelIO

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "data" / "samples"
IO = ModelIO((64, 64), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
runner = CliRunner()


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory, tiny_checkpoint) -> Path:
    """An untrained model whose head says "spray" everywhere: every image gets one record."""

    def spray_everywhere(model: torch.nn.Module) -> None:
        head = model.segmentation_head[0]
        torch.nn.init.zeros_(head.weight)
        torch.nn.init.constant_(head.bias, 10.0)

    root = tmp_path_factory.mktemp("cli")
    return tiny_checkpoint(root, "Unet", "mobilenet_v2", IO, spray_everywhere)[0]


@pytest.fixture(scope="module")
def onnx_file(weights: Path) -> Path:
    out = weights.with_suffix(".onnx")
    result = runner.invoke(
        app, ["export", "--weights", str(weights), "--parity-images", "3", "--image-size", "96"]
    )
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output and "max abs logit diff" in result.output
    assert out.is_file()
    return out


def test_export_flag_errors(weights: Path):
    result = runner.invoke(app, ["export", "--weights", str(weights), "--half"])
    assert result.exit_code == 2
    assert "--half does not apply to format 'onnx'" in result.output
    result = runner.invoke(app, ["export", "--weights", str(weights), "-f", "onnx16"])
    assert result.exit_code == 2 and "valid: onnx, onnx-int8, tensorrt" in result.output


def test_predict_images_writes_records_and_overlays(onnx_file: Path, tmp_path: Path):
    images = sorted((SAMPLES / "images").glob("*.jpg"))
    result = runner.invoke(
        app,
        [
            "predict",
            str(SAMPLES / "images"),
            "--weights",
            str(onnx_file),
            "--out",
            str(tmp_path),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "measurements.jsonl").read_text().splitlines()]
    assert sorted(Path(r["source"]).name for r in rows) == [p.name for p in images]
    assert {r["frame"] for r in rows} == {None} and "included_angle_deg" in rows[0]
    with (tmp_path / "measurements.csv").open() as f:
        table = list(csv.DictReader(f))
    assert len(table) == len(rows) and list(table[0])[:2] == ["source", "frame"]
    assert len(list((tmp_path / "overlays").glob("*.png"))) == len(images)


def test_predict_video_frames(weights: Path, tmp_path: Path):
    result = runner.invoke(
        app,
        [
            "predict",
            str(SAMPLES / "video.mp4"),
            "--weights",
            str(weights),
            "--out",
            str(tmp_path),
            "--max-frames",
            "3",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "measurements.jsonl").read_text().splitlines()]
    assert [r["frame"] for r in rows] == [0, 1, 2]
    assert (tmp_path / "video_overlay.mp4").stat().st_size > 0


def test_predict_without_a_shipped_model(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("SPRAYCV_WEIGHTS", str(tmp_path / "default.safetensors"))
    result = runner.invoke(app, ["predict", str(SAMPLES / "images")])
    assert result.exit_code == 2 and "no model is shipped yet" in result.output


def test_bench_side_by_side(weights: Path, onnx_file: Path):
    result = runner.invoke(
        app,
        [
            "bench",
            "--weights",
            str(weights),
            "--model",
            str(onnx_file),
            "--frames",
            "2",
            "--warmup",
            "1",
            "--no-export-missing",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    backends = figures["backends"]
    assert set(backends) == {"pytorch", "onnxruntime-fp32"}
    # these weights have no refiner beside them: the refine stage times the confidence
    # step alone (a fraction of a millisecond, whatever the machine's load: not asserted)
    assert figures["refined"] == []
    for entry in backends.values():
        assert set(entry["stages_ms"]) == {
            "decode",
            "preprocess",
            "inference",
            "postprocess",
            "geometry",
            "refine",
        }
        assert all(ms >= 0 for ms in entry["stages_ms"].values())
        assert entry["fps"] > 0
    assert backends["pytorch"]["speedup_vs_pytorch"] == {"inference": 1.0, "e2e": 1.0}


def test_predict_checks_readings_against_a_spec(tmp_path: Path):
    """--nominal-deg on predict, as on measure: each image reading and each video nozzle's
    steady reading checked, the records carrying status and deviation, and one count."""
    args = ["predict", str(SAMPLES / "images" / "000000.jpg"), str(SAMPLES / "video.mp4")]
    args += ["--max-frames", "3", "--out", str(tmp_path), "--quiet", "--no-overlays"]
    result = runner.invoke(app, [*args, "--nominal-deg", "55", "--tolerance-deg", "5"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "measurements.jsonl").read_text().splitlines()]
    for row in rows:
        angle = row["included_angle_deg"]
        if angle is not None and not row["unreliable"]:
            assert row["spec_deviation_deg"] == pytest.approx(angle - 55)
            assert row["spec_status"] == ("out_of_spec" if abs(angle - 55) > 5 else "ok")
    image = [r for r in rows if r["frame"] is None]
    assert [r["spec_status"] for r in image] == ["out_of_spec"]  # a 36 deg fan
    lines = result.stdout.splitlines()
    steady = [line for line in lines if line.startswith(str(SAMPLES / "video.mp4"))]
    assert len(steady) == 3 and all(line.split()[-1] == "ok" for line in steady)  # 55-57 deg
    assert "spec 55 +- 5 deg: 3 ok, 1 out of spec, 0 unreliable, 0 not measured" in lines
    bad = runner.invoke(app, [*args, "--tolerance-deg", "5"])
    assert bad.exit_code == 2 and "go together" in bad.output


def test_side_by_side_times_each_labelled_pipeline_on_the_same_frames(onnx_file: Path):
    """The benchmarks that compare pipelines in one run (benchmarks/input_size_speed.py,
    ort_spinning.py) print this: one row per label, after a line that names the run."""
    predictors = {}
    for n in (64, 96):
        predictor = OnnxPredictor(onnx_file, "cpu", threads=1)
        predictor.io = dataclasses.replace(predictor.io, input_size=(n, n))
        predictors[f"input {n} px"] = predictor
    report = side_by_side(predictors, {}, frames=2, size=128, nozzles=1).splitlines()
    assert report[0].startswith("2 frames 128x128, 1 nozzles, ")
    labels = {line.split("  ")[0].strip() for line in report[2:4]}
    assert labels == {"input 64 px", "input 96 px"}
    assert report[1].split()[:2] == ["backend", "decode"]
