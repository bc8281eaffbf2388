"""Dice + BCE (+ Lovasz hinge) loss, computed in float32 whatever the autocast precision."""

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


def excess_bce(per_pixel: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-pixel BCE minus its floor, the soft target's own entropy: 0 where a pixel's
    probability equals its target, whatever the target (any shape, float)."""
    t = target.clamp(1e-6, 1 - 1e-6)
    return per_pixel + t * torch.log(t) + (1 - t) * torch.log1p(-t)


def lovasz_hinge(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The Lovasz hinge (Berman et al., CVPR 2018) of (N, 1, H, W) logits against a target
    in [0, 1] (thresholded at 0.5), per image then averaged: a convex surrogate of 1 - IoU,
    so its gradient goes to the pixels that cost the image's own IoU most. An image with no
    true pixel is charged its hinge errors by the same rule (its IoU is 0 or 1)."""
    signs = 2.0 * (target.flatten(1) > 0.5).float() - 1.0
    errors = 1.0 - logits.flatten(1).float() * signs
    errors_sorted, order = torch.sort(errors, dim=1, descending=True)
    truth_sorted = torch.gather((signs > 0).float(), 1, order)
    truth_total = truth_sorted.sum(1, keepdim=True)
    intersection = truth_total - truth_sorted.cumsum(1)
    union = truth_total + (1.0 - truth_sorted).cumsum(1)
    jaccard = 1.0 - intersection / union
    # the Jaccard loss's gradient along the sorted errors: its increments
    grad = torch.cat([jaccard[:, :1], jaccard[:, 1:] - jaccard[:, :-1]], dim=1)
    return (F.relu(errors_sorted) * grad).sum(1).mean()


class DiceBCELoss(nn.Module):
    """`bce_weight * BCE + dice_weight * (1 - soft Dice) + lovasz_weight * Lovasz hinge`,
    soft Dice and the Lovasz hinge per image then averaged.

    The BCE is a weighted mean: pixels within `boundary_px` of the target's boundary weigh
    `1 + boundary_weight` (0: a plain mean), so the gradient goes where the mask's IoU and
    the sides' angles are decided rather than to the easy inside and background. With
    `hard_pixel_frac` < 1 it averages only that share of the batch's pixels, those furthest
    from their targets (online hard-pixel mining: the faint fronts rather than the sky).

    Inputs: logits (N, C, H, W), channel 0 the mask, and target (N, 1, H, W) in [0, 1].
    """

    def __init__(
        self,
        bce_weight: float = 1.0,
        dice_weight: float = 1.0,
        eps: float = 1.0,
        boundary_weight: float = 0.0,
        boundary_px: int = 3,
        hard_pixel_frac: float = 1.0,
        lovasz_weight: float = 0.0,
    ):
        super().__init__()
        self.lovasz_weight = lovasz_weight
        self.bce_weight, self.dice_weight, self.eps = bce_weight, dice_weight, eps
        self.boundary_weight, self.boundary_px = boundary_weight, boundary_px
        self.hard_pixel_frac = hard_pixel_frac

    @classmethod
    def from_config(cls, cfg: LossConfig) -> DiceBCELoss:
        """The loss a training config asks for."""
        return cls(
            cfg.bce_weight,
            cfg.dice_weight,
            boundary_weight=cfg.boundary_weight,
            boundary_px=cfg.boundary_px,
            hard_pixel_frac=cfg.hard_pixel_frac,
            lovasz_weight=cfg.lovasz_weight,
        )

    def _bce(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        per_pixel = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
        if self.boundary_weight == 0 and self.hard_pixel_frac >= 1.0:
            return per_pixel.mean()  # the plain BCE, as before these options
        weight = torch.ones_like(per_pixel)
        if self.boundary_weight > 0:
            weight = weight + self.boundary_weight * boundary_band(target, self.boundary_px)
        if self.hard_pixel_frac < 1.0:
            flat = excess_bce(per_pixel, target).flatten()
            k = max(1, round(self.hard_pixel_frac * flat.numel()))
            hardest = torch.topk(flat.detach(), k, sorted=False).indices
            per_pixel, weight = per_pixel.flatten()[hardest], weight.flatten()[hardest]
        return (weight * per_pixel).sum() / weight.sum()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # fp16/bf16 logits lose the precision BCE and the Dice sums need
        # channel 0 is the mask; an apex head's channel is trained by `spraycv apex-head`
        logits, target = logits[:, :1].float(), target.float()
        bce = self._bce(logits, target)
        prob = torch.sigmoid(logits).flatten(1)
        flat = target.flatten(1)
        inter = (prob * flat).sum(1)
        dice = (2 * inter + self.eps) / (prob.sum(1) + flat.sum(1) + self.eps)
        loss = self.bce_weight * bce + self.dice_weight * (1 - dice.mean())
        if self.lovasz_weight > 0:
            loss = loss + self.lovasz_weight * lovasz_hinge(logits, target)
        return loss


def heat_distill_loss(
    student: torch.Tensor, teacher: torch.Tensor, peak_weight: float = 0.0
) -> torch.Tensor:
    """BCE of one channel's logits (N, 1, h, w), the apex heatmap's or the mask's, against a
    frozen teacher's probabilities on the same views; with `peak_weight`, each cell weighs
    1 + peak_weight x the teacher's probability there (the peaks decide which apexes the
    geometry sees, not the flat background)."""
    target = torch.sigmoid(teacher.float())
    weight = 1.0 + peak_weight * target if peak_weight else None
    return F.binary_cross_entropy_with_logits(student.float(), target, weight=weight)


def mask_distill_loss(logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """BCE of the mask channel (0) of (N, C, H, W) logits against a teacher's probabilities
    (N, 1 or C, H, W) on the same views."""
    return heat_distill_loss(logits[:, :1], teacher_logits[:, :1])


def apex_distill_loss(logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """`heat_distill_loss` on the apex channel (1) of (N, 2, H, W) logits: the student's
    heatmap kept where it was while the network trains."""
    return heat_distill_loss(logits[:, 1:2], teacher_logits[:, 1:2])
