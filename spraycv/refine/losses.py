"""What a refiner run minimises: the crop's mask against its truth, weighted on the boundary
near the orifice where the angle is read, the apex channel against the true apex, and, with a
teacher, both against a frozen refiner's logits (distillation)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from spraycv.config.refine import RefinerTrainConfig
from spraycv.refine.pose import crop_row

BAND_ROWS = (0.05, 0.45)  # the loss weighs edges here most: the angle is read on 10-40 %
EDGE_WINDOW = 7  # px: the width of the boundary zone the band weight applies to


def _spatial_cross_entropy(logits: torch.Tensor, target_logits: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the spatial softmax of logits (B, H, W) against the softmax of
    target_logits (B, H, W)."""
    target = torch.softmax(target_logits.flatten(1), dim=1)
    return -(target * torch.log_softmax(logits.flatten(1), dim=1)).sum(dim=1).mean()


def crop_loss(logits: torch.Tensor, truth: torch.Tensor, band_weight: float) -> torch.Tensor:
    """BCE weighted up on the boundary in the near-orifice band, plus soft Dice."""
    prob = torch.sigmoid(logits)
    dice = 1 - (2 * (prob * truth).sum() + 1) / (prob.sum() + truth.sum() + 1)
    return band_bce(logits, truth, band_weight) + dice


def band_bce(logits: torch.Tensor, truth: torch.Tensor, band_weight: float) -> torch.Tensor:
    """`crop_loss`'s BCE alone, weighted up on the boundary in the near-orifice band: against
    soft targets it is least where the probabilities equal them (a soft Dice is not)."""
    size = truth.shape[-1]
    rows = torch.arange(size, dtype=torch.float32)
    lo, hi = (crop_row(f, (size, size)) for f in BAND_ROWS)
    in_band = ((rows >= lo) & (rows <= hi)).float().view(1, 1, size, 1)
    pad = EDGE_WINDOW // 2
    edge = F.max_pool2d(truth, EDGE_WINDOW, 1, pad) + F.max_pool2d(-truth, EDGE_WINDOW, 1, pad)
    weight = 1.0 + band_weight * edge * in_band
    bce = F.binary_cross_entropy_with_logits(logits, truth, reduction="none")
    return (bce * weight).sum() / weight.sum()


def apex_loss(logits: torch.Tensor, apex: torch.Tensor, sigma: float) -> torch.Tensor:
    """Cross-entropy of the spatial softmax of apex logits (B, H, W) against a Gaussian of
    `sigma` px at each crop's true apex (B, 2) (col, row); crops without one (NaN) are left
    out. Its minimum puts the softmax's mean on the apex, between pixels too."""
    ok = torch.isfinite(apex[:, 0])
    if not bool(ok.any()):
        return logits.sum() * 0.0
    logits, apex = logits[ok], apex[ok]
    h, w = logits.shape[-2:]
    rows = torch.arange(h, dtype=torch.float32).view(1, h, 1)
    cols = torch.arange(w, dtype=torch.float32).view(1, 1, w)
    d2 = (cols - apex[:, 0].view(-1, 1, 1)) ** 2 + (rows - apex[:, 1].view(-1, 1, 1)) ** 2
    return _spatial_cross_entropy(logits, -d2 / (2 * sigma**2))


def distill_apex_loss(logits: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the spatial softmax of apex logits (B, H, W) against the teacher's
    (B, H, W): where the teacher puts the apex, and how sure it is."""
    return _spatial_cross_entropy(logits, teacher)


def batch_loss(
    logits: torch.Tensor,
    truths: torch.Tensor,
    apexes: torch.Tensor,
    cfg: RefinerTrainConfig,
    teacher: torch.Tensor | None = None,
    taught: torch.Tensor | None = None,
) -> torch.Tensor:
    """A batch's loss: the crop loss against the truth (B, 1, S, S), the apex channel's
    against the true apexes (B, 2), and with a teacher's logits (B, C, S, S) both against
    the teacher's too, weighed by `cfg.distill_weight`, on the rows `taught` (B,) bool
    marks (None: every row)."""
    loss = torch.zeros(())
    if not cfg.apex_only:
        loss = crop_loss(logits[:, :1], truths, cfg.band_weight)
    if cfg.apex_weight > 0:
        loss = loss + cfg.apex_weight * apex_loss(logits[:, 1], apexes, cfg.apex_sigma_px)
    if teacher is not None and (taught is None or bool(taught.any())):
        rows = slice(None) if taught is None else taught
        loss = loss + cfg.distill_weight * _distill_loss(logits[rows], teacher[rows], cfg)
    return loss


def _distill_loss(
    logits: torch.Tensor, teacher: torch.Tensor, cfg: RefinerTrainConfig
) -> torch.Tensor:
    """The truth's losses with the teacher's (B, C, S, S) logits as the truth: its crop
    probabilities, and its apex softmax where both have an apex channel."""
    loss = torch.zeros(())
    if not cfg.apex_only:
        mask_loss = crop_loss if cfg.distill_dice else band_bce
        loss = mask_loss(logits[:, :1], torch.sigmoid(teacher[:, :1]), cfg.band_weight)
    if cfg.apex_weight > 0 and teacher.shape[1] > 1:
        loss = loss + cfg.apex_weight * distill_apex_loss(logits[:, 1], teacher[:, 1])
    return loss
