"""What a refiner run trains, and what it keeps as its `init_weights` left it."""

from __future__ import annotations

from torch import nn

from spraycv.config.refine import RefinerTrainConfig
from spraycv.models.batchnorm import freeze_batchnorm


def frozen_modules(model: nn.Module, cfg: RefinerTrainConfig) -> list[nn.Module]:
    """What a run keeps as `init_weights` left it: the whole segmentation with `apex_only`,
    its encoder with `freeze_encoder`, else nothing."""
    if cfg.apex_only:
        return [model.net]
    return [model.net.encoder] if cfg.freeze_encoder else []


def trained_parameters(model: nn.Module, cfg: RefinerTrainConfig) -> list[nn.Parameter]:
    """The parameters a run trains: all but those of its frozen modules."""
    for module in frozen_modules(model, cfg):
        module.requires_grad_(False)
    return [p for p in model.parameters() if p.requires_grad]


def train_mode(model: nn.Module, cfg: RefinerTrainConfig) -> None:
    """Training mode, but the frozen modules stay in eval mode: their BatchNorm statistics
    are not updated either; with `freeze_batchnorm`, no BatchNorm layer's are."""
    model.train()
    for module in frozen_modules(model, cfg):
        module.eval()
    if cfg.freeze_batchnorm:
        freeze_batchnorm(model)
