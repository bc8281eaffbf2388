"""Dice + BCE loss, computed in float32 whatever the autocast precision."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from spraycv.config.train import LossConfig


def boundary_band(target: torch.Tensor, radius_px: int) -> torch.Tensor:
    """(N, 1, H, W) in [0, 1]: how much a (N, 1, H, W) target changes within `radius_px` of
    each pixel (its local max minus its local min): 1 near the boundary, 0 elsewhere."""
    size = 2 * radius_px + 1
    high = F.max_pool2d(target, size, stride=1, padding=radius_px)
    low = -F.max_pool2d(-target, size, stride=1, padding=radius_px)
    return high - low


class DiceBCELoss(nn.Module):
    """`bce_weight * BCE + dice_weight * (1 - soft Dice)`, soft Dice per image then averaged.

    The BCE is a weighted mean: pixels within `boundary_px` of the target's boundary weigh
    `1 + boundary_weight` (0: a plain mean), so the gradient goes where the mask's IoU and
    the sides' angles are decided rather than to the easy inside and background.

    Inputs: logits (N, C, H, W), channel 0 the mask, and target (N, 1, H, W) in [0, 1].
    """

    def __init__(
        self,
        bce_weight: float = 1.0,
        dice_weight: float = 1.0,
        eps: float = 1.0,
        boundary_weight: float = 0.0,
        boundary_px: int = 3,
    ):
        super().__init__()
        self.bce_weight, self.dice_weight, self.eps = bce_weight, dice_weight, eps
        self.boundary_weight, self.boundary_px = boundary_weight, boundary_px

    @classmethod
    def from_config(cls, cfg: LossConfig) -> DiceBCELoss:
        """The loss a training config asks for."""
        return cls(
            cfg.bce_weight,
            cfg.dice_weight,
            boundary_weight=cfg.boundary_weight,
            boundary_px=cfg.boundary_px,
        )

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # fp16/bf16 logits lose the precision BCE and the Dice sums need
        # channel 0 is the mask; an apex head's channel is trained by `spraycv apex-head`
        logits, target = logits[:, :1].float(), target.float()
        per_pixel = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        if self.boundary_weight > 0:
            weight = 1.0 + self.boundary_weight * boundary_band(target, self.boundary_px)
            bce = (weight * per_pixel).sum() / weight.sum()
        else:
            bce = per_pixel.mean()
        prob = torch.sigmoid(logits).flatten(1)
        flat = target.flatten(1)
        inter = (prob * flat).sum(1)
        dice = (2 * inter + self.eps) / (prob.sum(1) + flat.sum(1) + self.eps)
        return self.bce_weight * bce + self.dice_weight * (1 - dice.mean())


def apex_distill_loss(logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """BCE of the apex channel (1) of `logits` (N, 2, H, W) against the probabilities a
    frozen teacher gives on the same batch: the student's heatmap kept where it was."""
    student = logits[:, 1:2].float()
    target = torch.sigmoid(teacher_logits[:, 1:2].float())
    return F.binary_cross_entropy_with_logits(student, target)
