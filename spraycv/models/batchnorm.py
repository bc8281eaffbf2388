"""BatchNorm in training runs that fine-tune a model (one definition for every trainer)."""

from __future__ import annotations

from torch import nn


def freeze_batchnorm(model: nn.Module) -> None:
    """Put BatchNorm layers in eval mode: batch statistics no longer enter training, and the
    running statistics stay the starting model's (its weights still train)."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.eval()
