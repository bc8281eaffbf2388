"""The architectures spraycv trains, built through segmentation-models-pytorch, offline.

The name table (ARCHITECTURES, get_architecture) lives in spraycv.config.architectures and
is re-exported here.

Encoders start from random weights (`encoder_weights=None`) unless a local weights file is
given: nothing is ever downloaded.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from spraycv.config.architectures import ARCHITECTURES, Architecture, get_architecture
from spraycv.config.train import ModelConfig

__all__ = [
    "ARCHITECTURES",
    "Architecture",
    "count_parameters",
    "create_model",
    "get_architecture",
    "load_encoder_weights",
]


def create_model(config: ModelConfig) -> nn.Module:
    """Build a binary segmentation model (1 output channel of logits) from its config."""
    import segmentation_models_pytorch as smp

    arch = get_architecture(config.arch)
    try:
        model = smp.create_model(
            arch.smp_name,
            encoder_name=config.encoder,
            encoder_weights=None,  # offline: never fetch pretrained weights
            in_channels=3,
            classes=1,
            **config.kwargs,
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueError(
            f"cannot build {config.arch} with encoder {config.encoder!r}: {exc}"
        ) from exc
    if config.encoder_weights_path is not None:
        load_encoder_weights(model, config.encoder_weights_path)
    if config.apex_head:
        from spraycv.models.apex_head import WithApexHead

        return WithApexHead(model, fine=config.apex_fine)
    return model


def load_encoder_weights(model: nn.Module, path: Path) -> None:
    """Initialise `model.encoder` from a local file (safetensors or a torch state dict)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"encoder weights file not found: {path}")
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        state = load_file(str(path))
    else:
        state = torch.load(path, map_location="cpu", weights_only=True)
    state = {k.removeprefix("encoder."): v for k, v in state.items()}
    encoder: nn.Module = model.encoder  # type: ignore[assignment]
    own = encoder.state_dict()
    matching = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
    if not matching:
        raise ValueError(f"{path}: no tensor matches the encoder ({len(state)} tensors in file)")
    # smp encoders override load_state_dict (some return None), so merge and load in full
    encoder.load_state_dict({**own, **matching})


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
