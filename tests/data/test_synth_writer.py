"""Dataset writer, video writer and the `synth` command."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from spraycv.cli.synth import synth
from spraycv.data.synth import render_sample, render_video, write_dataset
from spraycv.data.synth.writer import sample_seed


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_write_dataset_layout_and_records(tmp_path: Path) -> None:
    out = write_dataset(tmp_path / "ds", 3, size=96, seed=5, workers=1, progress=False)
    lines = (out / "labels.jsonl").read_text().splitlines()
    assert len(lines) == 3
    meta = json.loads((out / "dataset.json").read_text())
    assert meta["n"] == 3 and meta["seed"] == 5 and "nozzle" in meta["render_config"]
    for i, line in enumerate(lines):
        rec = json.loads(line)
        assert rec["id"] == f"{i:06d}" and rec["image"] == f"images/{i:06d}.jpg"
        mask = cv2.imread(str(out / rec["mask"]), cv2.IMREAD_UNCHANGED)
        inst = cv2.imread(str(out / rec["instances"]), cv2.IMREAD_UNCHANGED)
        assert set(np.unique(mask)) <= {0, 255}
        assert np.array_equal(mask > 127, inst > 0)
        # The record's seed reproduces the sample.
        assert rec["seed"] == sample_seed(5, i)
        assert np.array_equal(render_sample(rec["seed"], 96).mask * 255, mask)
        assert cv2.imread(str(out / rec["image"])).shape == (96, 96, 3)


def test_write_dataset_same_output_for_any_worker_count(tmp_path: Path) -> None:
    a = write_dataset(
        tmp_path / "a", 4, size=80, seed=1, workers=1, image_format="png", progress=False
    )
    b = write_dataset(
        tmp_path / "b", 4, size=80, seed=1, workers=2, image_format="png", progress=False
    )
    assert _files(a) == _files(b)


def test_write_dataset_refuses_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not empty"):
        write_dataset(tmp_path, 1, size=64, workers=1, progress=False)
    write_dataset(tmp_path, 1, size=64, workers=1, overwrite=True, progress=False)
    assert (tmp_path / "keep.txt").exists()  # only the dataset's own files are replaced
    assert len((tmp_path / "labels.jsonl").read_text().splitlines()) == 1


def test_write_dataset_renders_frames_that_are_not_square(tmp_path: Path) -> None:
    out = write_dataset(tmp_path / "wide", 2, size=160, height=90, seed=5, workers=1,
                        progress=False)  # fmt: skip
    assert json.loads((out / "dataset.json").read_text())["height"] == 90
    for record in map(json.loads, (out / "labels.jsonl").read_text().splitlines()):
        shapes = {cv2.imread(str(out / record[k]), cv2.IMREAD_UNCHANGED).shape[:2]
                  for k in ("image", "mask", "instances")}  # fmt: skip
        assert shapes == {(90, 160)} and (record["width"], record["height"]) == (160, 90)


@pytest.mark.parametrize("bad", [{"image_format": "bmp"}, {"size": 32}, {"height": 32}])
def test_write_dataset_rejects_bad_arguments(tmp_path: Path, bad: dict) -> None:
    with pytest.raises(ValueError):
        write_dataset(tmp_path / "x", 1, workers=1, progress=False, **bad)


def test_render_video(tmp_path: Path) -> None:
    path = render_video(tmp_path / "v.mp4", seed=2, n_frames=4, fps=10, width=128, height=96)
    cap = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    assert len(frames) == 4 and frames[0].shape == (96, 128, 3)
    recs = [json.loads(x) for x in path.with_suffix(".jsonl").read_text().splitlines()]
    assert [r["frame"] for r in recs] == [0, 1, 2, 3]
    assert recs[3]["time_s"] == pytest.approx(0.3)
    for r in recs[1:]:  # same nozzles in every frame
        for n0, n1 in zip(recs[0]["nozzles"], r["nozzles"], strict=True):
            assert n0["apex"] == n1["apex"] and n0["axis"] == n1["axis"]
            assert n0["half_angle_left_deg"] == n1["half_angle_left_deg"]


def test_synth_command(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command()(synth)
    runner = CliRunner()
    out = tmp_path / "ds"
    args = ["--out", str(out), "--n", "2", "--size", "64", "--seed", "3", "--workers", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len((out / "labels.jsonl").read_text().splitlines()) == 2
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "not empty" in again.output
    helped = runner.invoke(app, ["--help"])
    assert "synthetic" in helped.output and "--image-format" in helped.output
