"""Validation during training: loss and mask metrics over ranks, cone-angle error on rank 0."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from spraycv.runtime.processing import ModelIO
from spraycv.training.distributed import DistInfo, all_reduce_sum
from spraycv.training.metrics import MaskMetrics
from spraycv.training.precision import autocast


@torch.no_grad()
def validate(
    model: nn.Module,
    loader: torch.utils.data.DataLoader,
    device: torch.device,
    precision: str,
    threshold: float,
    info: DistInfo,
    loss_fn: nn.Module,
) -> dict[str, float]:
    """Mean loss, IoU, Dice and boundary F1 at the network's input size, summed over ranks."""
    model.eval()
    metrics, loss_sum = MaskMetrics(), 0.0
    cut = float(np.log(threshold / (1 - threshold)))
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        with autocast(precision, device):
            logits = model(images)
        loss_sum += float(loss_fn(logits, masks)) * len(images)
        preds = (logits.float() > cut).cpu().numpy()[:, 0]
        for pred, target in zip(preds, masks.cpu().numpy()[:, 0] > 0.5, strict=True):
            metrics.update(pred, target)
    sums = all_reduce_sum(np.append(metrics.as_array(), loss_sum), info, device)
    out = MaskMetrics.means(sums[:4])
    out["loss"] = float(sums[4] / max(sums[3], 1.0))
    return {k: float(v) for k, v in out.items()}


@dataclass
class AngleErrors:
    """Included-angle errors of matched plumes, and the plumes missed or extra."""

    errors_deg: list[float] = field(default_factory=list)
    missed: int = 0
    extra: int = 0
    frames: int = 0

    def summary(self) -> dict[str, float]:
        e = np.abs(np.asarray(self.errors_deg, dtype=float))
        stat = (lambda f: float(f(e))) if e.size else (lambda f: float("nan"))
        return {
            "angle_mae_deg": stat(np.mean),
            "angle_median_deg": stat(np.median),
            "angle_p95_deg": stat(lambda a: np.percentile(a, 95)),
            "plumes_missed": float(self.missed),
            "plumes_extra": float(self.extra),
        }


@torch.no_grad()
def angle_errors(
    model: nn.Module, samples: Sequence, io: ModelIO, device: torch.device
) -> AngleErrors:
    """Included-angle error of the model's full-resolution masks against the reference masks.

    Each sample's reference angles come from the geometry on its labelled mask, the same
    definition as the prediction's; plumes are paired by apex distance.
    """
    from spraycv.geometry.matching import compare_readings
    from spraycv.measure import Measurer
    from spraycv.runtime.predictor import ModulePredictor

    model.eval()
    measurer = Measurer(ModulePredictor(model, io, device=device))
    result = AngleErrors()
    for sample in samples:
        image, ref_mask = sample.load()
        reference = measurer.read_mask(ref_mask).measurements
        compared = compare_readings(reference, measurer(image).measurements)
        result.errors_deg += compared.errors_deg
        result.missed += compared.missed
        result.extra += compared.extra
        result.frames += 1
    return result
