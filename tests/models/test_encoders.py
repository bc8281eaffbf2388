"""smp's deprecated `timm-` encoders and their `tu-` replacements (spraycv.models.encoders)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from torch import nn

from spraycv.config.loader import ConfigError, load_config
from spraycv.config.render import RenderConfig
from spraycv.config.train import ModelConfig, TrainConfig
from spraycv.data.synth import render_sample
from spraycv.data.synth.writer import sample_seed
from spraycv.models import create_model
from spraycv.models.apex_head import WithApexHead
from spraycv.models.encoders import ENCODER_REPLACEMENTS, upgrade_checkpoint_meta
from spraycv.paths import default_checkpoint
from spraycv.runtime.processing import ModelIO, preprocess
from spraycv.training.checkpoint import (
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
    sidecar_path,
    upgrade_checkpoint,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SHIPPED = default_checkpoint()
SMALL_DECODER = {"decoder_channels": [32, 16, 16, 16, 16]}
HELDOUT_SEED = 1000  # the held-out set: spraycv synth --out datasets/heldout --seed 1000


def build_smp_unet(encoder: str, **kwargs: object) -> nn.Module:
    """An untrained smp Unet, built by smp itself: spraycv's configs refuse `timm-` names."""
    import segmentation_models_pytorch as smp

    kwargs = {**SMALL_DECODER, **kwargs}
    model = smp.create_model(
        "unet", encoder_name=encoder, encoder_weights=None, in_channels=3, classes=1, **kwargs
    )
    return model.eval()


def build_deprecated_unet(encoder: str, **kwargs: object) -> nn.Module:
    """The same for an old name, which smp must still build, warning that it is deprecated."""
    try:
        with pytest.warns(DeprecationWarning, match="`timm-` encoders are deprecated"):
            return build_smp_unet(encoder, **kwargs)
    except KeyError:  # smp has dropped the name: nothing left to compare with
        pytest.skip(f"this smp no longer builds {encoder}")


def layer_signature(model: nn.Module) -> list[tuple[str, str, tuple]]:
    """Every module's name, type and the hyper-parameters that change its output."""
    fields = ("kernel_size", "stride", "padding", "dilation", "groups", "eps", "ceil_mode")
    fields += ("in_channels", "out_channels", "num_features")
    return [
        (name, type(module).__name__, tuple(getattr(module, f, None) for f in fields))
        for name, module in model.named_modules()
    ]


@pytest.mark.parametrize(("old", "new"), sorted(ENCODER_REPLACEMENTS.items()))
def test_each_replacement_is_the_same_network_with_the_same_weight_keys(old: str, new: str):
    torch.manual_seed(0)
    before = build_deprecated_unet(old)
    after = build_smp_unet(new)
    enc_before, enc_after = before.encoder, after.encoder
    # depth 5: the input and five feature levels, with their channels and strides
    assert len(enc_after.out_channels) == 6
    assert enc_after.out_channels == enc_before.out_channels
    assert enc_after.model.feature_info.reduction() == enc_before.model.feature_info.reduction()
    assert enc_after.output_stride == enc_before.output_stride == 32
    assert layer_signature(after) == layer_signature(before)  # layer for layer
    state = before.state_dict()
    assert {k: v.shape for k, v in after.state_dict().items()} == {
        k: v.shape for k, v in state.items()
    }  # the key mapping is the identity
    after.load_state_dict(state, strict=True)
    x = torch.randn(2, 3, 64, 96, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        assert torch.equal(after(x), before(x))


def test_the_plain_tu_look_alike_is_a_different_network():
    """tu-mobilenetv3_small_100 takes the same weights but pads and normalises otherwise."""
    torch.manual_seed(0)
    tf_port = build_smp_unet(ENCODER_REPLACEMENTS["timm-mobilenetv3_small_100"])
    look_alike = build_smp_unet("tu-mobilenetv3_small_100")
    look_alike.load_state_dict(tf_port.state_dict(), strict=True)
    x = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        assert not torch.allclose(look_alike(x), tf_port(x), atol=1e-3)


def test_the_shipped_model_gives_the_same_logits_as_its_deprecated_build_on_heldout_images():
    """The shipped weights in smp's deprecated `timm-` network and in its `tu-tf_` name."""
    raw = json.loads(sidecar_path(SHIPPED).read_text())
    assert raw["model"]["encoder"] == "tu-tf_mobilenetv3_small_100"
    assert raw["train_config"]["model"]["encoder"] == raw["model"]["encoder"]
    assert SHIPPED.stat().st_size <= 15e6
    model, meta = load_checkpoint(SHIPPED)
    assert isinstance(model, WithApexHead)
    deprecated = raw.get("encoder_converted_from", "timm-mobilenetv3_small_100")
    old = deprecated_build_of(SHIPPED, deprecated, meta["model"]["kwargs"])
    config = RenderConfig()
    images = [render_sample(sample_seed(HELDOUT_SEED, i), 512, config).image for i in range(3)]
    x = torch.from_numpy(preprocess(images, ModelIO.from_sidecar(meta)))
    with torch.inference_mode():
        assert torch.equal(model(x), old(x))  # both channels: mask and apex logits


def test_configs_refuse_deprecated_names_and_name_the_fix():
    with pytest.raises(ConfigError, match="use 'tu-tf_mobilenetv3_small_100', the same network"):
        load_config(TrainConfig, None, ["model.encoder=timm-mobilenetv3_small_100"])
    with pytest.raises(ValueError, match=r"no tested conversion .* retrain with a `tu-`"):
        ModelConfig(encoder="timm-efficientnet-b0")


def deprecated_build_of(weights: Path, encoder: str, kwargs: dict) -> nn.Module:
    """A checkpoint's weights in the network smp builds for the deprecated `encoder` name."""
    model = WithApexHead(build_deprecated_unet(encoder, **kwargs))
    state = {k: v.float() if v.is_floating_point() else v for k, v in load_file(weights).items()}
    model.load_state_dict(state, strict=True)
    return model.eval()


def old_checkpoint(root: Path, encoder: str) -> Path:
    """A checkpoint as spraycv saved it before the move: the same weights, the old name."""
    torch.manual_seed(0)
    cfg = ModelConfig(encoder="tu-tf_mobilenetv3_small_075", kwargs=SMALL_DECODER, apex_head=True)
    model = create_model(cfg).eval()
    side = {
        "model": cfg.model_dump(mode="json"),
        **ModelIO((64, 64), (0.5,) * 3, (0.5,) * 3).to_sidecar(),
        "train_config": {"model": cfg.model_dump(mode="json")},
    }
    weights = save_checkpoint(root / "old.safetensors", model, side, torch.float16)
    raw = json.loads(sidecar_path(weights).read_text())
    raw["model"]["encoder"] = raw["train_config"]["model"]["encoder"] = encoder
    sidecar_path(weights).write_text(json.dumps(raw))
    return weights


def test_an_old_checkpoint_loads_under_the_new_name(tmp_path: Path):
    weights = old_checkpoint(tmp_path, "timm-mobilenetv3_small_075")
    model, meta = load_checkpoint(weights)
    assert meta["model"]["encoder"] == "tu-tf_mobilenetv3_small_075"
    assert meta["train_config"]["model"]["encoder"] == "tu-tf_mobilenetv3_small_075"
    assert meta["encoder_converted_from"] == "timm-mobilenetv3_small_075"
    old = deprecated_build_of(weights, "timm-mobilenetv3_small_075", SMALL_DECODER)
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        assert torch.equal(model(x), old(x))


def test_an_old_checkpoint_without_a_replacement_fails_in_one_line(tmp_path: Path):
    weights = old_checkpoint(tmp_path, "timm-regnetx_002")
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(weights)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{weights}: encoder 'timm-regnetx_002' is deprecated")
    assert "retrain with a `tu-`" in message


def test_upgrade_checkpoint_rewrites_the_sidecar_and_keeps_every_tensor(tmp_path: Path):
    weights = old_checkpoint(tmp_path, "timm-mobilenetv3_small_075")
    before = load_file(weights)
    out = tmp_path / "new.safetensors"
    assert upgrade_checkpoint(weights, out) == "timm-mobilenetv3_small_075"
    after = load_file(out)
    assert before.keys() == after.keys()
    assert all(
        torch.equal(before[k], after[k]) and before[k].dtype == after[k].dtype for k in after
    )
    raw = json.loads(sidecar_path(out).read_text())
    assert raw["model"]["encoder"] == "tu-tf_mobilenetv3_small_075"
    assert raw["weights_dtype"] == "float16"
    assert upgrade_checkpoint(out) is None  # current already: left as it is


def test_upgrade_leaves_current_and_partial_sidecars_alone():
    current = {"model": {"encoder": "mobilenet_v2"}, "train_config": None}
    assert upgrade_checkpoint_meta(current) == current
    assert upgrade_checkpoint_meta({"threshold": 0.5}) == {"threshold": 0.5}


def test_smp_deprecation_warnings_fail_the_suite():
    """pyproject's filterwarnings: smp's DeprecationWarnings are errors in the tests."""
    with pytest.raises(DeprecationWarning):
        warnings.warn_explicit(
            "deprecated", DeprecationWarning, "x.py", 1, module="segmentation_models_pytorch.x"
        )


def test_other_libraries_deprecation_warnings_stay_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.warn_explicit("deprecated", DeprecationWarning, "x.py", 1, module="other_lib")
    assert len(caught) == 1
