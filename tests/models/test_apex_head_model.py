from __future__ import annotations

from pathlib import Path

import pytest
import torch

from spraycv.config.train import ModelConfig
from spraycv.models import create_model
from spraycv.models.apex_head import WithApexHead
from spraycv.training.checkpoint import load_checkpoint, save_checkpoint

ARCHS = [("Unet", "mobilenet_v2"), ("FPN", "mobilenet_v2"), ("Segformer", "mit_b0")]


@pytest.mark.parametrize(("arch", "encoder"), ARCHS)
def test_apex_head_adds_a_channel_and_leaves_the_mask_as_it_was(arch: str, encoder: str):
    torch.manual_seed(0)
    model = create_model(ModelConfig(arch=arch, encoder=encoder, apex_head=True)).eval()
    assert isinstance(model, WithApexHead)
    x = torch.randn(2, 3, 64, 96)
    with torch.no_grad():
        out = model(x)
        plain = model.net(x)
    assert out.shape == (2, 2, 64, 96)
    assert torch.equal(out[:, :1], plain)  # the head never changes the mask logits
    # starts unsure everywhere: sigmoid ~0.1, so no apex is claimed before training
    assert torch.sigmoid(out[:, 1]).max() < 0.5


def test_apex_head_checkpoint_round_trip(tmp_path: Path):
    torch.manual_seed(0)
    cfg = ModelConfig(arch="Unet", encoder="mobilenet_v2", apex_head=True)
    model = create_model(cfg).eval()
    side = {
        "model": cfg.model_dump(mode="json"),
        "input_size": [64, 64],
        "normalization": {"mean": [0.5] * 3, "std": [0.5] * 3},
        "threshold": 0.5,
        "apex_threshold": 0.2,
    }
    path = save_checkpoint(tmp_path / "m.safetensors", model, side)
    loaded, meta = load_checkpoint(path)
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        assert torch.equal(loaded(x), model(x))
    assert meta["model"]["apex_head"] is True


@pytest.mark.parametrize(("arch", "encoder"), [("Unet", "mobilenet_v2"), ("FPN", "mobilenet_v2")])
def test_the_fine_apex_correction_starts_at_zero_and_survives_a_checkpoint(
    arch: str, encoder: str, tmp_path: Path
):
    """A fresh correction leaves the head's logits as they were (FPN's decoder ends at a
    quarter of the input: the correction is resized); once trained it is saved and loaded."""
    torch.manual_seed(0)
    cfg = ModelConfig(arch=arch, encoder=encoder, apex_head=True, apex_fine=True)
    model = create_model(cfg).eval()
    x = torch.randn(1, 3, 64, 96)
    with torch.no_grad():
        out = model(x)
        fine, model.apex_fine = model.apex_fine, None
        assert torch.equal(model(x), out)
        model.apex_fine = fine
        torch.nn.init.normal_(model.apex_fine.weight)
        trained = model(x)
    assert not torch.equal(trained[:, 1], out[:, 1]) and torch.equal(trained[:, 0], out[:, 0])
    side = {"model": cfg.model_dump(mode="json"), "input_size": [64, 96],
            "normalization": {"mean": [0.5] * 3, "std": [0.5] * 3}, "threshold": 0.5}  # fmt: skip
    loaded, _ = load_checkpoint(save_checkpoint(tmp_path / "m.safetensors", model, side))
    with torch.no_grad():
        assert torch.equal(loaded(x), trained)


@pytest.mark.parametrize(
    ("arch", "fused"),
    [("Unet", True), ("FPN", False)],  # FPN's head upsamples: it cannot share a convolution
)
def test_the_mask_head_and_the_fine_correction_run_as_one_convolution_where_they_can(
    arch: str, fused: bool
):
    """A bare segmentation head and the fine correction run as one two-channel convolution
    (ONNX Runtime pads each one-channel output to 16 channels), with the very logits of the
    two convolutions run apart."""
    torch.manual_seed(0)
    cfg = ModelConfig(arch=arch, encoder="mobilenet_v2", apex_head=True, apex_fine=True)
    model = create_model(cfg).eval()
    torch.nn.init.normal_(model.apex_fine.weight)
    calls = []
    model.net.segmentation_head.register_forward_hook(lambda *_: calls.append(1))
    x = torch.randn(2, 3, 64, 96)
    with torch.no_grad():
        out = model(x)
        assert len(calls) == (0 if fused else 1)
        apart = model.net(x)
        decoded, feats = model._decoded(x)
        apex = torch.nn.functional.interpolate(
            model.apex(feats), size=x.shape[-2:], mode="bilinear"
        )
        fine = torch.nn.functional.interpolate(
            model.apex_fine(decoded), size=x.shape[-2:], mode="bilinear"
        )
    torch.testing.assert_close(out[:, :1], apart, rtol=0, atol=1e-5)
    torch.testing.assert_close(out[:, 1:], apex + fine, rtol=0, atol=1e-5)
