"""What a refiner run validates on: the included angle read from fixed val crops, the apex
distances, and how much plume the refiner draws on held-out crops without one."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from spraycv.config.refine import RefinerTrainConfig
from spraycv.refine.apex import read_apex
from spraycv.refine.data import CropSource, Target, jittered_pose
from spraycv.refine.edges import READ_BAND, near_apex, side_lines
from spraycv.refine.negatives import NegativePose
from spraycv.refine.pose import CropPose, to_image
from spraycv.refine.stage import crop_support, sigmoid
from spraycv.runtime.processing import ModelIO, preprocess


@torch.no_grad()
def batched_logits(model: nn.Module, crops: list[np.ndarray], io: ModelIO) -> np.ndarray:
    """(N, C, S, S) the model's logits on N (S, S, 3) crops, 32 at a time, in eval mode
    (the model is left training)."""
    model.eval()
    out = [model(torch.from_numpy(preprocess(crops[k : k + 32], io))).numpy()
           for k in range(0, len(crops), 32)]  # fmt: skip
    model.train()
    return np.concatenate(out)


def read_included(prob: np.ndarray, transform: np.ndarray) -> float:
    """The included angle (deg) read from one crop's probability as the refinement stage
    reads it, NaN when unreadable."""
    left, right = side_lines(prob, transform)
    if left is None or right is None:
        return math.nan
    cos = float(np.clip(left.direction @ right.direction, -1, 1))
    return math.degrees(math.acos(cos))


class CropValidation:
    """A fixed set of val crops and the angle error of a model read on them."""

    def __init__(self, source: CropSource, cfg: RefinerTrainConfig):
        rng = np.random.default_rng(12345)  # the same crops in every run and resume
        picks = rng.choice(len(source.targets), min(cfg.val_crops, len(source.targets)), False)
        self.items: list[tuple[Target, CropPose]] = [
            (source.targets[i], jittered_pose(source.targets[i], cfg.jitter, rng)) for i in picks
        ]
        self.crops = [source.crop(t, p, cfg.crop_size) for t, p in self.items]

    def errors(self, probs: list[np.ndarray]) -> np.ndarray:
        """(N,) absolute included-angle errors (NaN where unreadable)."""
        out = []
        transforms = [transform for _, _, transform in self.crops]
        for (target, _), transform, prob in zip(self.items, transforms, probs, strict=True):
            read = read_included(prob, transform)
            out.append(abs(read - target.included))
        return np.asarray(out)

    def truth_errors(self) -> np.ndarray:
        """The reading's own floor: errors when the crop's truth is read."""
        return self.errors([truth for _, truth, _ in self.crops])

    def logits(self, model: nn.Module, io: ModelIO) -> np.ndarray:
        """(N, C, S, S) the model's logits on the crops (C 2 with an apex channel)."""
        return batched_logits(model, [c[0] for c in self.crops], io)

    def model_errors(self, logits: np.ndarray) -> np.ndarray:
        """`errors` of the spray channel of `logits` (N, C, S, S)."""
        return self.errors(list(sigmoid(logits[:, 0])))

    def apex_errors(self, logits: np.ndarray) -> dict[str, float]:
        """Median distance (image px) along the axis from the true apex: of the apex where the
        near-orifice edges meet (`near_axial`) and, with an apex channel, of its reading
        (`apex_axial`) and its distance (`apex_px`)."""
        near, axial, dist = [], [], []
        for (target, _), (_, _, transform), out in zip(self.items, self.crops, logits, strict=True):
            truth, axis = np.asarray(target.apex), np.asarray(target.axis)
            met = near_apex(sigmoid(out[0]), transform)
            near.append(abs(float((met - truth) @ axis)) if met is not None else np.nan)
            if out.shape[0] > 1:
                read = to_image(read_apex(out[1])[0][None], transform)[0]
                axial.append(abs(float((read - truth) @ axis)))
                dist.append(float(np.hypot(*(read - truth))))
        found = {"near_axial": near, "apex_axial": axial, "apex_px": dist}
        return {k: float(np.nanmedian(v)) for k, v in found.items() if v}


class NegativeValidation:
    """Held-out crops without a plume (`held_out`: the mined poses a run keeps out of
    training, `Negatives.val`), and how much plume core a model draws on them."""

    def __init__(self, source: CropSource, held_out: list[NegativePose], cfg: RefinerTrainConfig):
        self.items = held_out[: cfg.val_crops]
        self.crops = [source.empty_crop(n.frame, n.pose(), cfg.crop_size)[0] for n in self.items]

    def supports(self, model: nn.Module, io: ModelIO) -> dict[str, float]:
        """Mean support and the share of crops with a support over 0.5 (a plume drawn)."""
        if not self.crops:
            return {}
        probs = sigmoid(batched_logits(model, self.crops, io)[:, 0])
        values = [crop_support(prob, n.pose(), n.widest, READ_BAND)
                  for n, prob in zip(self.items, probs, strict=True)]  # fmt: skip
        ok = np.asarray(values)[np.isfinite(values)]
        return {"neg_support": float(ok.mean()), "neg_drawn": float((ok > 0.5).mean())}


def summary(errors: np.ndarray) -> dict[str, float]:
    ok = errors[np.isfinite(errors)]
    if not ok.size:
        return {"mae": math.nan, "median": math.nan, "p95": math.nan, "unread": 1.0}
    return {
        "mae": float(ok.mean()),
        "median": float(np.median(ok)),
        "p95": float(np.percentile(ok, 95)),
        "unread": float(1 - ok.size / errors.size),
    }


def val_metrics(
    val: CropValidation,
    val_negatives: NegativeValidation | None,
    model: nn.Module,
    io: ModelIO,
) -> dict[str, float]:
    """The model's angle errors and apex distances on the val crops, and with held-out
    negatives how much plume it draws on them."""
    val_logits = val.logits(model, io)
    metrics = summary(val.model_errors(val_logits)) | val.apex_errors(val_logits)
    if val_negatives is not None:
        metrics |= val_negatives.supports(model, io)
    return metrics
