from __future__ import annotations

from pathlib import Path

import pytest

from spraycv.config.loader import ConfigError, load_config, parse_overrides
from spraycv.config.refine import RefinerTrainConfig
from spraycv.config.train import TrainConfig

CONFIGS = sorted(Path(__file__).resolve().parents[2].joinpath("configs").glob("*.yaml"))
REFINER_CONFIGS = sorted(
    Path(__file__).resolve().parents[2].joinpath("configs", "refine").glob("*.yaml")
)


def test_overrides_parse_as_yaml_values():
    assert parse_overrides(["optim.lr=1e-3", "epochs=5", "model.arch=FPN", "compile=true"]) == {
        "optim": {"lr": 1e-3},
        "epochs": 5,
        "model": {"arch": "FPN"},
        "compile": True,
    }


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["epochz=3"], "epochz"),
        (["optim.lr=-1"], "optim.lr"),
        (["precision=8-mixed"], "precision"),
        (["model.arch=NotANet"], "valid names: Unet"),
        (["data.input_size=100"], "multiples of 32"),
        (["batch_size"], "key=value"),
    ],
)
def test_bad_keys_and_values_are_rejected_with_their_name(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TrainConfig, None, overrides)


def test_missing_and_malformed_files(tmp_path: Path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(TrainConfig, tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("epochs: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(TrainConfig, bad)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_shipped_configs_validate(path: Path):
    cfg = load_config(TrainConfig, path)
    assert cfg.name == path.stem


@pytest.mark.parametrize("path", REFINER_CONFIGS, ids=lambda p: p.name)
def test_every_shipped_refiner_config_is_valid(path: Path):
    cfg = load_config(RefinerTrainConfig, path)
    assert cfg.name and cfg.crop_size % 32 == 0


def test_several_training_folders_are_read_as_one_set(
    wedge_data: Path, wedge_data_128: Path, tmp_path: Path
):
    """`train_data` takes one folder or several; their samples are split as one set, and a
    set too small to split names every folder."""
    import shutil

    from spraycv.data.sample import DataError
    from spraycv.training.data import make_splits, training_samples

    assert TrainConfig(train_data=str(wedge_data)).train_data == [wedge_data]
    cfg = TrainConfig(train_data=[wedge_data, wedge_data_128])
    samples = training_samples(cfg)
    assert {s.image_path.parent.parent for s in samples} == {wedge_data, wedge_data_128}
    assert len({s.id for s in samples}) == 24 + 16  # unique, though both number from 0000
    split = make_splits(cfg)  # a seeded split of the 40 (its test share left out)
    assert {s.id for s in split.train}.isdisjoint(s.id for s in split.val)
    assert {s.image_path.parent.parent for s in split.train} == {wedge_data, wedge_data_128}
    tiny = [tmp_path / "c", tmp_path / "d"]
    for folder in tiny:
        for part in ("images", "masks"):
            (folder / part).mkdir(parents=True)
            shutil.copy(wedge_data / part / "0000.png", folder / part / "0000.png")
    with pytest.raises(DataError, match=f"^{tiny[0]}, {tiny[1]}: too few samples"):
        make_splits(TrainConfig(train_data=tiny))
    with pytest.raises(ValueError, match="at least 1"):
        TrainConfig(train_data=[])
