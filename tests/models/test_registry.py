from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from spraycv.config.train import ModelConfig
from spraycv.models import ARCHITECTURES, create_model, load_encoder_weights
from spraycv.models.registry import Architecture, get_architecture

DEFAULTS = {name: arch.default_encoder for name, arch in ARCHITECTURES.items()}
# the encoders the shipped configs use, at their smallest
CONFIGURED = [
    ("Unet", "mobilenet_v2"),
    ("UnetPlusPlus", "mobilenet_v2"),
    ("FPN", "mobilenet_v2"),
    ("DeepLabV3Plus", "mobilenet_v2"),
    ("Segformer", "mit_b0"),
]


EXTRA = [("Linknet", "resnet18"), ("MAnet", "resnet18")]


@pytest.mark.parametrize(("arch", "encoder"), [*CONFIGURED, *EXTRA])
def test_every_architecture_trains_forward_and_backward(arch: str, encoder: str):
    torch.manual_seed(0)
    model = create_model(ModelConfig(arch=arch, encoder=encoder))
    x = torch.randn(2, 3, 64, 64)
    out = model(x)
    assert out.shape == (2, 1, 64, 64)
    out.mean().backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)


def test_unknown_architecture_lists_valid_names():
    with pytest.raises(ValueError, match="valid names: Unet, UnetPlusPlus"):
        get_architecture("Unetto")


def test_bad_encoder_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot build Unet with encoder 'no_such_encoder'"):
        create_model(ModelConfig(arch="Unet", encoder="no_such_encoder"))


def test_encoder_weights_from_a_local_file(tmp_path: Path):
    source = create_model(ModelConfig(arch="FPN", encoder="mobilenet_v2"))
    path = tmp_path / "encoder.safetensors"
    tensors = {f"encoder.{k}": v.contiguous() for k, v in source.encoder.state_dict().items()}
    save_file(tensors, path)
    cfg = ModelConfig(arch="Unet", encoder="mobilenet_v2", encoder_weights_path=path)
    target = create_model(cfg)
    for k, v in source.encoder.state_dict().items():
        torch.testing.assert_close(target.encoder.state_dict()[k], v)
    with pytest.raises(FileNotFoundError):
        load_encoder_weights(target, tmp_path / "missing.pt")
    junk = tmp_path / "junk.safetensors"
    save_file({"unrelated": torch.zeros(3)}, junk)
    with pytest.raises(ValueError, match="no tensor matches"):
        load_encoder_weights(target, junk)


def test_table_entries_are_architectures():
    assert all(isinstance(a, Architecture) for a in ARCHITECTURES.values())
    assert {"Unet", "UnetPlusPlus", "FPN", "DeepLabV3Plus", "Segformer"} <= set(DEFAULTS)
