from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.data.synth import write_dataset

runner = CliRunner()
TINY = [
    "data.input_size=64",
    "data.augment.enabled=false",
    "batch_size=4",
    "workers=0",
    "angle_eval_images=0",
    "early_stop_patience=null",
    "optim.lr=0.01",
    "data.split_fractions=[0.75,0.25,0.0]",
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("rendered")
    train = write_dataset(root / "train", 16, size=128, seed=11, workers=1, progress=False)
    test = write_dataset(root / "test", 4, size=128, seed=12, workers=1, progress=False)
    return train, test


@pytest.mark.slow
def test_compare_trains_evaluates_ranks_and_selects(rendered, tmp_path: Path):
    train, test = rendered
    configs = []
    for name, arch in (("fpn_tiny", "FPN"), ("unet_tiny", "Unet")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"name: {name}\nmodel:\n  arch: {arch}\n  encoder: mobilenet_v2\n")
        configs.append(str(path))
    out = tmp_path / "cmp"
    sets = [x for item in [f"train_data={train}", *TINY] for x in ("--set", item)]
    result = runner.invoke(
        app,
        [
            "compare",
            *configs,
            "--test-data",
            str(test),
            "--out",
            str(out),
            "--epochs",
            "2",
            "--max-latency-ms",
            "10000",
            *sets,
        ],
    )
    # tiny models trained for seconds may find no plume at all: then nothing is selected
    # and the command exits 1; the rule itself is tested in test_leaderboard.py
    assert result.exit_code in (0, 1), result.output
    board = (out / "leaderboard.md").read_text()
    for name in ("fpn_tiny", "unet_tiny", "classical-threshold"):
        assert f"| {name} |" in board
    assert "Budget of every trained model: epochs=2, train_data=" in board
    selection = json.loads((out / "selection.json").read_text())
    if result.exit_code == 0:
        assert selection["selected"]["name"] in ("fpn_tiny", "unet_tiny")
        assert "lowest included-angle MAE" in selection["why"]
    else:
        assert selection["selected"] is None and "no trained model" in selection["why"]
    assert "lowest included-angle MAE" in selection["rule"]
    assert (out / "accuracy_vs_latency.png").stat().st_size > 1000
    assert (out / "runs" / "unet_tiny" / "best.safetensors").is_file()
    metrics = json.loads((out / "eval" / "fpn_tiny" / "metrics.json").read_text())
    assert metrics["frames"] == 4.0


def test_eval_command_writes_metrics_and_plots(rendered, tmp_path: Path):
    _, test = rendered
    out = tmp_path / "ev"
    result = runner.invoke(
        app, ["eval", "--weights", "classical", "--data", str(test), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    for name in ("metrics.json", "frames.jsonl", "angle_error_hist.png", "worst_cases.png"):
        assert (out / name).stat().st_size > 0, name
    assert json.loads((out / "metrics.json").read_text())["frames"] == 4.0


def test_eval_refuses_unknown_weights(rendered, tmp_path: Path):
    _, test = rendered
    result = runner.invoke(app, ["eval", "--weights", str(tmp_path / "m.xyz"), "--data", str(test)])
    assert result.exit_code == 2
    assert "no backend for suffix '.xyz'" in result.output
