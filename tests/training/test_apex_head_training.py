from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.config.apex_head import ApexHeadConfig
from spraycv.data.synth import write_dataset
from spraycv.paths import default_checkpoint
from spraycv.runtime.predictor import load_predictor
from spraycv.training.apex_head import (
    focal_loss,
    heatmap_targets,
    teacher_loss,
    train_apex_head,
)
from spraycv.training.checkpoint import load_checkpoint, save_checkpoint


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("apex")
    return write_dataset(root / "train", 6, size=256, seed=21, workers=1, progress=False)


def test_targets_peak_at_one_on_each_apex_cell():
    t = heatmap_targets([[(3.4, 5.9), (10.0, 2.0)], []], (8, 16), sigma=1.5)
    assert t.shape == (2, 1, 8, 16)
    assert t[0, 0, 5, 3] == 1.0 and t[0, 0, 2, 10] == 1.0
    assert int((t[0] == 1.0).sum()) == 2 and t[1].max() == 0.0
    good = torch.where(t > 0.99, 8.0, -8.0)
    assert focal_loss(good, t) < 0.01 < focal_loss(torch.zeros_like(t), t)


@pytest.mark.slow
def test_apex_head_trains_on_a_frozen_model_and_keeps_its_masks(
    rendered: Path, tmp_path: Path, one_torch_thread: None
):
    losses: list[float] = []

    def log(line: str) -> None:
        if m := re.search(r"focal loss ([0-9.]+)", line):
            losses.append(float(m.group(1)))

    cfg = ApexHeadConfig(
        data=rendered, val_data=rendered, out=tmp_path / "m.safetensors", epochs=4, batch_size=4
    )
    path, score = train_apex_head(cfg, progress=False, log=log)
    assert len(losses) == 4 and losses[-1] < losses[0]
    assert score is not None and score.images == 6 and score.apexes > 0
    base, extended = load_predictor(default_checkpoint()), load_predictor(path)
    assert extended.has_apex_head
    images = [np.full((240, 320, 3), 90, np.uint8), np.zeros((100, 100, 3), np.uint8)]
    batch = np.stack([np.random.default_rng(0).normal(size=(3, 256, 256))] * 2).astype(np.float32)
    np.testing.assert_array_equal(extended.infer(batch)[:, :1], base.infer(batch)[:, :1])
    for a, b in zip(extended.predict(images), base.predict(images), strict=True):
        np.testing.assert_array_equal(a, b)
    assert all(s.apexes.shape[1] == 2 for s in extended.segment(images))


def _heat(weights: Path, batch: np.ndarray) -> np.ndarray:
    return load_predictor(weights).infer(batch)[:, 1]


@pytest.mark.slow
def test_keep_head_fine_tunes_the_models_own_head(
    rendered: Path, tmp_path: Path, one_torch_thread: None
):
    batch = np.random.default_rng(1).normal(size=(2, 3, 256, 256)).astype(np.float32)
    shipped = _heat(default_checkpoint(), batch)
    heads = {}
    for keep in (True, False):
        cfg = ApexHeadConfig(
            data=rendered, val_data=None, out=tmp_path / f"{keep}.safetensors",
            epochs=1, batch_size=4, lr=1e-9, keep_head=keep,
        )  # fmt: skip
        heads[keep] = _heat(train_apex_head(cfg, progress=False, log=lambda _: None)[0], batch)
    # float16 files: the kept head moves by rounding only; a fresh one is another head
    np.testing.assert_allclose(heads[True], shipped, atol=0.05)
    assert np.abs(heads[False] - shipped).max() > 1.0


def test_keep_head_needs_a_head(tmp_path: Path):
    net, meta = load_checkpoint(default_checkpoint())
    headless = tmp_path / "headless.safetensors"
    sidecar = {k: v for k, v in meta.items() if k not in ("format", "spraycv_version", "created")}
    save_checkpoint(headless, net.net, {**sidecar, "model": {**meta["model"], "apex_head": False}})
    cfg = ApexHeadConfig(weights=headless, keep_head=True, out=tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match=r"headless\.safetensors: keep_head, but the model has no"):
        train_apex_head(cfg, progress=False, log=lambda _: None)


def test_cli_reports_a_missing_checkpoint(tmp_path: Path):
    result = CliRunner().invoke(
        app, ["apex-head", "--weights", str(tmp_path / "none.safetensors"), "--quiet"]
    )
    assert result.exit_code == 2
    assert "not found" in result.output


def test_teacher_loss_is_least_where_the_heats_agree():
    teacher = torch.full((2, 1, 8, 8), -6.0)
    teacher[0, 0, 3, 4] = 4.0
    missed_peak = teacher.clone()
    missed_peak[0, 0, 3, 4] = -6.0
    assert teacher_loss(teacher, teacher) < teacher_loss(missed_peak, teacher)
    assert teacher_loss(teacher, teacher) < teacher_loss(torch.zeros_like(teacher), teacher)


@pytest.mark.slow
def test_a_head_learns_a_teachers_heat(rendered: Path, tmp_path: Path, one_torch_thread: None):
    batch = np.random.default_rng(2).normal(size=(2, 3, 256, 256)).astype(np.float32)
    losses: list[float] = []

    def log(line: str) -> None:
        if m := re.search(r"teacher loss ([0-9.]+)", line):
            losses.append(float(m.group(1)))

    cfg = ApexHeadConfig(
        data=rendered, val_data=None, out=tmp_path / "m.safetensors", epochs=6, batch_size=4,
        teacher=default_checkpoint(),
    )  # fmt: skip
    path, _ = train_apex_head(cfg, progress=False, log=log)
    assert len(losses) == 6 and losses[-1] < losses[0]
    # a fresh head on the same network, held to the shipped head: nearer it than at the start
    fresh = ApexHeadConfig(data=rendered, val_data=None, out=tmp_path / "f.safetensors", epochs=1,
                           batch_size=4, lr=1e-9)  # fmt: skip
    start = _heat(train_apex_head(fresh, progress=False, log=lambda _: None)[0], batch)
    shipped, taught = _heat(default_checkpoint(), batch), _heat(path, batch)
    assert np.abs(taught - shipped).mean() < np.abs(start - shipped).mean()


def test_a_teacher_must_read_inputs_as_the_model_does(tmp_path: Path):
    net, meta = load_checkpoint(default_checkpoint())
    other = tmp_path / "other.safetensors"
    sidecar = {k: v for k, v in meta.items() if k not in ("format", "spraycv_version", "created")}
    save_checkpoint(other, net, {**sidecar, "input_size": [320, 320]})
    cfg = ApexHeadConfig(teacher=other, out=tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match=r"other\.safetensors: the teacher reads its inputs"):
        train_apex_head(cfg, progress=False, log=lambda _: None)
    headless = tmp_path / "headless.safetensors"
    save_checkpoint(headless, net.net, {**sidecar, "model": {**meta["model"], "apex_head": False}})
    cfg = ApexHeadConfig(teacher=headless, out=tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match=r"headless\.safetensors: the teacher has no apex head"):
        train_apex_head(cfg, progress=False, log=lambda _: None)
