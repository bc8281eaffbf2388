"""Dice + BCE loss, computed in float32 whatever the autocast precision."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class DiceBCELoss(nn.Module):
    """`bce_weight * BCE + dice_weight * (1 - soft Dice)`, soft Dice per image then averaged.

    Inputs: logits (N, C, H, W), channel 0 the mask, and target (N, 1, H, W) in {0, 1}.
    """

    def __init__(self, bce_weight: float = 1.0, dice_weight: float = 1.0, eps: float = 1.0):
        super().__init__()
        self.bce_weight, self.dice_weight, self.eps = bce_weight, dice_weight, eps

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # fp16/bf16 logits lose the precision BCE and the Dice sums need
        # channel 0 is the mask; an apex head's channel is trained by `spraycv apex-head`
        logits, target = logits[:, :1].float(), target.float()
        bce = F.binary_cross_entropy_with_logits(logits, target)
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
