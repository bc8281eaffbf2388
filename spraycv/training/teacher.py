"""The frozen starting model of a fine-tune, as a teacher: its apex heatmap kept
(`TrainConfig.apex_distill`) and its mask averaged over views learnt into one pass
(`TrainConfig.view_distill`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from spraycv.config.train import TrainConfig, ViewDistillConfig
from spraycv.models.registry import create_model
from spraycv.training.losses import apex_distill_loss, mask_distill_loss
from spraycv.training.precision import autocast


def view_average(
    model: nn.Module,
    images: torch.Tensor,
    views: ViewDistillConfig,
    multiple: int,
    plain: torch.Tensor | None = None,
) -> torch.Tensor:
    """The mask logits (N, 1, H, W) of `model` averaged over views of images (N, C, H, W):
    each of `views.scales` (a resize to sides that are multiples of `multiple`) and, with
    `views.mirror`, its mirror image. plain: model(images), where the caller has it already
    (the unresized view is then not run again)."""
    size, total, count = images.shape[-2:], torch.zeros(()), 0
    for scale in views.scales:
        scaled = [max(multiple, round(side * scale / multiple) * multiple) for side in size]
        unresized = scaled == list(size)
        x = images if unresized else F.interpolate(images, scaled, mode="bilinear")
        out = plain if unresized and plain is not None else model(x)
        outs = [out[:, :1].float()]
        if views.mirror:
            outs.append(model(x.flip(-1))[:, :1].float().flip(-1))
        for out in outs:
            total = total + F.interpolate(out, size=size, mode="bilinear")
            count += 1
    return total / count


@dataclass(frozen=True)
class Teacher:
    """A frozen copy of the starting model and the losses a run takes against it."""

    model: nn.Module
    cfg: TrainConfig
    device: torch.device
    multiple: int  # the input sides' multiple (ModelIO.size_multiple), for the views
    precision: str  # the run's, resolved (spraycv.training.precision.resolve_precision)

    @staticmethod
    def of(
        cfg: TrainConfig,
        device: torch.device,
        state: Mapping[str, torch.Tensor] | None,
        multiple: int,
        precision: str,
    ) -> Teacher | None:
        """The teacher of a run that asks for one (apex_distill or view_distill) and starts
        from `state`; None otherwise."""
        if (cfg.apex_distill is None and cfg.view_distill is None) or state is None:
            return None
        model = create_model(cfg.model)
        model.load_state_dict(state, strict=True)
        for p in model.parameters():
            p.requires_grad_(False)
        return Teacher(model.eval().to(device), cfg, device, multiple, precision)

    def loss(
        self, images: torch.Tensor, logits: torch.Tensor, taught: torch.Tensor | None = None
    ) -> torch.Tensor:
        """`all_rows` on the rows `taught` marks (None: all); a batch without one gives a
        zero that still reaches every parameter (DDP expects each one's gradient)."""
        if taught is None:
            return self.all_rows(images, logits)
        rows = taught.to(logits.device)
        if not bool(rows.any()):
            return 0.0 * self.all_rows(images[:1], logits[:1])
        return self.all_rows(images[rows], logits[rows])

    def all_rows(self, images: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        """The losses against the teacher: its apex heatmap kept, and its mask averaged over
        views (a test-time average learnt)."""
        cfg, loss = self.cfg, torch.zeros((), device=logits.device)
        with torch.no_grad(), autocast(self.precision, self.device):  # the teacher's outputs
            kept = self.model(images) if cfg.apex_distill is not None else None
            views = cfg.view_distill
            mean = view_average(self.model, images, views, self.multiple, kept) if views else None
        if kept is not None:
            loss = loss + cfg.apex_distill * apex_distill_loss(logits, kept)
        if mean is not None:
            loss = loss + views.weight * mask_distill_loss(logits, mean)
        return loss
