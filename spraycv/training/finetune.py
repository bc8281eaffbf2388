"""Fine-tune a trained model on a user's own labelled images, mixed with rendered ones.

The training itself is the ordinary loop (`spraycv.training.loop.train`: same losses,
augmentation, logs) started from the checkpoint's weights on a mixed sample list; then the
BatchNorm statistics are re-estimated and the apex head is re-fitted to the new features.
Before and after, the model is scored on the user's held-out images, through the pipeline
it will run in (with the start model's refiner, which is copied beside the new checkpoint):
mask IoU, and the included-angle error against the geometry measured on the label masks.
"""

from __future__ import annotations

import hashlib
import math
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import ValidationError
from torch import nn

from spraycv.config.apex_head import ApexHeadConfig
from spraycv.config.data import DataConfig
from spraycv.config.finetune import FinetuneConfig
from spraycv.config.loader import dump_config
from spraycv.config.train import ModelConfig, TrainConfig
from spraycv.data.dataset import SprayDataset
from spraycv.data.formats import load_samples
from spraycv.data.sample import DataError, Sample
from spraycv.formats import refiner_companion
from spraycv.geometry.matching import compare_readings
from spraycv.measure import Measurer
from spraycv.models.apex_head import WithApexHead
from spraycv.models.registry import count_parameters
from spraycv.refine.stage import Refiner
from spraycv.runtime.predictor import ModulePredictor, load_predictor
from spraycv.runtime.processing import ModelIO
from spraycv.training.apex_head import fit_head, view_features
from spraycv.training.checkpoint import load_checkpoint, save_checkpoint, sidecar_path
from spraycv.training.data import Splits
from spraycv.training.finetune_data import (
    mix_samples,
    split_holdout,
    step_budget,
    synthetic_samples,
)
from spraycv.training.loop import train
from spraycv.training.metrics import iou_dice

VAL_IMAGES_MAX = 64  # the loop's per-epoch check runs on this many of the user's train images
BN_IMAGES_MAX = 256  # BatchNorm statistics are re-estimated on this many user train images
REFIT_BATCH = 8  # the apex head's re-fit batch (spraycv apex-head takes 32 on thousands of views)
# The re-fit runs at least this many steps: 20 epochs of a user's 16 images (32 views with
# their mirrors) are 80 steps of 8, which left a fresh head on the network shipped at
# 2026-12-04 17:55 at its prior, marking no apex (experiments row 136)
REFIT_MIN_STEPS = 320


@dataclass
class FinetuneResult:
    """The new checkpoint, and held-out figures of the start model and the fine-tuned one."""

    weights: Path
    before: dict[str, float]
    after: dict[str, float]
    counts: dict[str, int] = field(default_factory=dict)  # user/synthetic/holdout/steps
    run_dir: Path | None = None
    refiner: Path | None = None  # the start model's refiner, carried beside the new weights


@torch.no_grad()
def score(
    model: nn.Module,
    samples: Sequence[Sample],
    io: ModelIO,
    device: str | torch.device = "cpu",
    refiner: Refiner | None = None,
) -> dict[str, float]:
    """Mean mask IoU and included-angle errors of `model` (and `refiner`, which re-reads
    each plume near its orifice, where one is given) on labelled samples.

    The reference angles are the geometry's on each label mask (the same definition as
    the prediction's); plumes are paired by apex distance, unpaired ones count as missed
    (in the label) or extra (in the prediction). Angle figures are NaN with no pairs.
    """
    model.eval()
    measurer = Measurer(ModulePredictor(model, io, device=device), refiner=refiner)
    ious, errors, missed, extra = [], [], 0, 0
    for sample in samples:
        image, label = sample.load()
        reading = measurer(image)
        ious.append(iou_dice(reading.mask, label)[0])
        compared = compare_readings(measurer.read_mask(label).measurements, reading.measurements)
        errors += [abs(e) for e in compared.errors_deg]
        missed, extra = missed + compared.missed, extra + compared.extra
    err = np.asarray(errors, dtype=float)
    return {
        "images": float(len(ious)),
        "iou": float(np.mean(ious)) if ious else math.nan,
        "angle_mae_deg": float(err.mean()) if err.size else math.nan,
        "angle_median_deg": float(np.median(err)) if err.size else math.nan,
        "plumes_matched": float(err.size),
        "plumes_missed": float(missed),
        "plumes_extra": float(extra),
    }


TABLE_ROWS = (  # key, label, format, sign of "better"
    ("iou", "mask IoU", "{:.3f}", +1),
    ("angle_mae_deg", "angle MAE (deg)", "{:.2f}", -1),
    ("angle_median_deg", "angle median (deg)", "{:.2f}", -1),
    ("plumes_matched", "plumes matched", "{:.0f}", +1),
    ("plumes_missed", "plumes missed", "{:.0f}", -1),
    ("plumes_extra", "plumes extra", "{:.0f}", -1),
)


def format_table(before: dict[str, float], after: dict[str, float]) -> str:
    """A small text table of the held-out figures: start model, fine-tuned, change."""

    def cell(fmt: str, value: float) -> str:
        return "n/a" if not math.isfinite(value) else fmt.format(value)

    title = f"held-out ({before.get('images', 0):.0f} images)"
    lines = [f"{title:<22} {'start':>8} {'fine-tuned':>11} {'change':>8}"]
    for key, label, fmt, _ in TABLE_ROWS:
        b, a = before.get(key, math.nan), after.get(key, math.nan)
        change = cell("{:+" + fmt[2:], a - b) if math.isfinite(a - b) else "n/a"
        lines.append(f"{label:<22} {cell(fmt, b):>8} {cell(fmt, a):>11} {change:>8}")
    return "\n".join(lines)


WORSE_BY = {"iou": 0.02, "angle_mae_deg": 0.5}  # a change past these, the wrong way, is worse
# (row 19's fine-tune read the masks better and the angles worse: either one counts)


def worse_warning(before: dict[str, float], after: dict[str, float]) -> str | None:
    """A one-line warning naming each held-out figure of WORSE_BY that the fine-tuned model
    made worse than the start model by more than its tolerance, else None."""
    worse = []
    for key, label, fmt, better in TABLE_ROWS:
        b, a = before.get(key, math.nan), after.get(key, math.nan)
        if key in WORSE_BY and math.isfinite(a - b) and better * (a - b) < -WORSE_BY[key]:
            worse.append(f"{label} {fmt.format(b)} -> {fmt.format(a)}")
    if not worse:
        return None
    return (
        f"warning: the fine-tuned model reads your held-out images worse ({', '.join(worse)}); "
        "keep the start model, or give more images or steps"
    )


def load_user_data(cfg: FinetuneConfig) -> tuple[list[Sample], list[Sample], str]:
    """(train, held-out, how the held-out set was made) from the user's labelled images."""
    if cfg.data is None:
        raise DataError("no labelled data given (--data DIR)")
    samples = load_samples(cfg.data, cfg.data_format, labels=cfg.labels)
    if not samples:
        raise DataError(f"{cfg.data}: no labelled images found")
    if cfg.holdout is not None:
        held = load_samples(cfg.holdout, cfg.data_format, labels=cfg.labels)
        if not held:
            raise DataError(f"{cfg.holdout}: no labelled images found")
        return samples, held, str(cfg.holdout)
    train_part, held = split_holdout(samples, cfg.holdout_fraction, cfg.split_seed)
    how = f"{cfg.holdout_fraction:g} of {cfg.data} (split seed {cfg.split_seed})"
    return train_part, held, how


def make_train_config(cfg: FinetuneConfig, meta: dict[str, Any], n_train: int) -> TrainConfig:
    """The loop's config: model and input handling from the checkpoint, budget from `cfg`."""
    io = ModelIO.from_sidecar(meta)
    raw = dict((meta.get("train_config") or {}).get("data") or {})
    try:  # the start model's augmentation and mask handling, if its sidecar still parses
        data = DataConfig.model_validate(raw).model_dump()
    except ValidationError:
        data = DataConfig().model_dump()
    # the runtime's input handling wins over the stored config's: the same exposure step
    data.update(input_size=io.input_size, mean=io.mean, std=io.std, exposure=asdict(io.exposure))
    if io.resize == "keep_aspect":  # the user's frames at the scale the runtime reads them
        data["resize_mode"] = "keep_aspect"
    if cfg.augment is not None:
        data["augment"] = cfg.augment.model_dump()
    epochs, per_epoch = step_budget(n_train, cfg.batch_size, cfg.epochs, cfg.steps)
    return TrainConfig(
        name=cfg.work_dir.name,
        out_dir=cfg.work_dir.parent,
        train_data=cfg.data,
        data=DataConfig.model_validate(data),
        model=ModelConfig.model_validate(meta["model"]),
        optim=cfg.optim,
        epochs=epochs,
        max_train_images=per_epoch * cfg.batch_size if cfg.steps is not None else None,
        batch_size=cfg.batch_size,
        workers=cfg.workers,
        precision=cfg.precision,
        freeze_batchnorm=cfg.freeze_batchnorm,
        early_stop_patience=None,
        seed=cfg.seed,
        threshold=io.threshold,
        angle_eval_images=0,
        device=cfg.device,
        threads=cfg.threads,
    )


@torch.no_grad()
def recalibrate_batchnorm(
    model: nn.Module,
    samples: Sequence[Sample],
    data: DataConfig,
    batch_size: int,
    device: str | torch.device = "cpu",
) -> int:
    """Re-estimate the BatchNorm running statistics on `samples` as the runtime sees them.

    During training the running statistics follow the augmented, rendered/user-mixed
    batches while the weights move, so they fit neither the last weights nor the user's
    camera (with an exposure `stretch` model, black affine corners also keep a foggy
    frame from being stretched in training, never at inference). Here they become the
    batch statistics of the user's images through the eval transform (resize, exposure
    normalisation, mean/std: the runtime's preprocessing), averaged over the batches with
    equal weights ("precise BN"); the weights stay.
    Returns the number of images used (0: the model has no BatchNorm, nothing changed).
    """
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms or not samples:
        return 0
    dataset = SprayDataset.from_config(samples[:BN_IMAGES_MAX], data, train=False)
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over all batches
    model.train()
    for start in range(0, len(dataset), batch_size):
        batch = [dataset[i][0] for i in range(start, min(start + batch_size, len(dataset)))]
        model(torch.stack(batch).to(device))
    for m, momentum in zip(norms, momenta, strict=True):
        m.momentum = momentum
    model.eval()
    return len(dataset)


def label_apexes(
    samples: Sequence[Sample], measurer: Measurer
) -> Iterator[tuple[np.ndarray, list[tuple[float, float]]]]:
    """Each sample's image and the in-image apexes the geometry reads on its label mask
    (the same reference `score` measures the angles against)."""
    for sample in samples:
        image, label = sample.load()
        h, w = label.shape[:2]
        apexes = [m.apex for m in measurer.read_mask(label).measurements if m.ok]
        yield image, [(x, y) for x, y in apexes if 0 <= x < w and 0 <= y < h]


def refit_apex_head(
    model: nn.Module,
    samples: Sequence[Sample],
    io: ModelIO,
    device: str | torch.device = "cpu",
) -> int:
    """Re-fit the apex head of a fine-tuned model to its new decoder features.

    The loop trains the segmentation network with the apex head frozen (spraycv.training.
    loop, unless `apex_distill` is set), so after fine-tuning the head reads features it
    was never trained on, and its peaks, which pose every plume, can drift
    (docs/experiments.md, row 19: a fine-tuned model read an unseen camera's masks better
    and its angles worse, and a new head was the suspect). Here the head, from its own
    weights, trains on the fine-tuned features of `samples` (and their mirrors) against the
    apexes of their label masks. Returns the number of views used (0: no apex head,
    unchanged).
    """
    if not isinstance(model, WithApexHead) or not samples:
        return 0
    model.eval()
    measurer = Measurer(ModulePredictor(model, io, device=device))
    views = label_apexes(samples, measurer)
    head_views = view_features(model, views, io, flip=True, device=device)
    # small batches, and a floor on the steps: a user's few images still train the head
    steps_per_epoch = max(len(head_views.feats) // REFIT_BATCH, 1)
    epochs = max(ApexHeadConfig().epochs, math.ceil(REFIT_MIN_STEPS / steps_per_epoch))
    head_cfg = ApexHeadConfig(batch_size=REFIT_BATCH, epochs=epochs, device=str(device))
    fit_head(model.apex, head_views, head_cfg, log=lambda _: None)
    model.eval()
    return len(head_views.feats)


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def start_refiner(weights: Path, device: str) -> Refiner | None:
    """The refiner stored beside the start model, if any: it re-reads each plume on a crop of
    the image around its orifice, whatever network found the plume, so a fine-tuned model is
    scored and deployed with it as the shipped one is (a foreign camera, 40 steps, two seeds:
    angle MAE 6.15 and 4.36 deg without it, 2.12 and 1.93 with it; experiments row 88)."""
    companion = refiner_companion(weights)
    return Refiner(load_predictor(companion, device)) if companion.is_file() else None


def carry_refiner(weights: Path, out: Path) -> Path | None:
    """Copy the start model's refiner and its sidecar beside the new checkpoint, where every
    loader looks for it (spraycv.formats.refiner_companion); None when there is none."""
    source, target = refiner_companion(weights), refiner_companion(out)
    if not source.is_file():
        return None
    shutil.copyfile(source, target)
    shutil.copyfile(sidecar_path(source), sidecar_path(target))
    return target


def _origin(
    cfg: FinetuneConfig,
    meta: dict[str, Any],
    *,
    rendered_from: str,
    holdout_how: str,
    counts: dict[str, int],
    before: dict[str, float],
    after: dict[str, float],
    refiner: Refiner | None,
) -> dict[str, Any]:
    """The new checkpoint's `finetuned` record: the start model (path, hash, date), the data
    and how it was mixed and held out, the counts, the held-out scores and the config."""
    return {
        "from_weights": str(cfg.weights),
        "from_sha256": _sha256(cfg.weights),
        "from_created": meta.get("created"),
        "data": str(cfg.data),
        "data_format": cfg.data_format,
        "labels": cfg.labels,
        "synthetic": rendered_from,
        "mix_ratio": cfg.mix_ratio,
        "holdout": holdout_how,
        **{f"n_{k}": v for k, v in counts.items()},
        "heldout_before": before,
        "heldout_after": after,
        "refiner": str(refiner_companion(cfg.weights)) if refiner is not None else None,
        "config": dump_config(cfg),
    }


def finetune(cfg: FinetuneConfig, progress: bool = True) -> FinetuneResult:
    """Fine-tune `cfg.weights` on the user's images mixed with rendered ones; see the module."""
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    device = "cuda" if cfg.device != "cpu" and torch.cuda.is_available() else "cpu"
    start, meta = load_checkpoint(cfg.weights, device)  # first: a wrong path fails at once
    io = ModelIO.from_sidecar(meta)
    user_train, held, holdout_how = load_user_data(cfg)
    refiner = start_refiner(cfg.weights, device)
    before = score(start, held, io, device, refiner)
    with synthetic_samples(cfg, len(user_train), progress) as (rendered, rendered_from):
        mixed = mix_samples(user_train, rendered, cfg.mix_ratio, cfg.seed)
        train_cfg = make_train_config(cfg, meta, len(mixed))
        per_epoch = step_budget(len(mixed), cfg.batch_size, cfg.epochs, cfg.steps)[1]
        splits = Splits(mixed, user_train[:VAL_IMAGES_MAX])
        result = train(train_cfg, progress, splits=splits, initial_state=start.state_dict())
        model = result.model if result.model is not None else start
        bn_images = 0  # freeze_batchnorm: the start model's statistics are kept, as asked
        if not cfg.freeze_batchnorm:
            bn_images = recalibrate_batchnorm(
                model, user_train, train_cfg.data, cfg.batch_size, device
            )
        apex_views = refit_apex_head(model, mixed, io, device) if cfg.refit_apex_head else 0
    after = score(model, held, io, device, refiner)
    counts = {
        "user_train": len(user_train),
        "synthetic": len(mixed) - len(user_train),
        "holdout": len(held),
        "epochs": result.epochs_run,
        "steps": result.epochs_run * per_epoch,
        "bn_images": bn_images,
        "apex_views": apex_views,
    }
    finetuned = _origin(
        cfg,
        meta,
        rendered_from=rendered_from,
        holdout_how=holdout_how,
        counts=counts,
        before=before,
        after=after,
        refiner=refiner,
    )
    sidecar = {
        "model": meta["model"],
        **io.to_sidecar(),
        "train_config": dump_config(train_cfg),
        "parameters": count_parameters(model),
        "epoch": result.epochs_run,
        "heldout_metrics": {"user_heldout": after},
        "finetuned": finetuned,
    }
    weights = save_checkpoint(cfg.out, model, sidecar)
    carried = carry_refiner(cfg.weights, weights)
    return FinetuneResult(weights, before, after, counts, result.run_dir, carried)
