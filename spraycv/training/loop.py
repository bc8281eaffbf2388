"""One training run: the same code for one process and for DDP under torchrun."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler
from tqdm import tqdm

from spraycv.config.apex_head import ApexHeadConfig
from spraycv.config.loader import dump_config
from spraycv.config.train import ModelConfig, TrainConfig
from spraycv.models.batchnorm import freeze_batchnorm
from spraycv.models.registry import count_parameters, create_model
from spraycv.runtime.processing import ModelIO
from spraycv.training import data as run_data
from spraycv.training.average import WeightAverage
from spraycv.training.checkpoint import (
    load_checkpoint,
    read_sidecar,
    save_checkpoint,
    unwrap,
)
from spraycv.training.distributed import DistInfo, any_rank, cleanup, init_distributed
from spraycv.training.evaluate import angle_errors, validate
from spraycv.training.logger import RunLogger
from spraycv.training.losses import DiceBCELoss
from spraycv.training.precision import (
    autocast,
    check_precision,
    grad_scaler,
    resolve_precision,
)
from spraycv.training.schedule import BudgetProgress, budget_scheduler
from spraycv.training.state import restore_state, save_state
from spraycv.training.teacher import Teacher


@dataclass
class TrainResult:
    """What a run produced: where, how far it got, and its best validation metrics."""

    run_dir: Path
    best_weights: Path
    epochs_run: int
    best_metrics: dict[str, float] = field(default_factory=dict)
    history: list[dict[str, float]] = field(default_factory=list)
    model: nn.Module | None = None  # the last epoch's model, unwrapped


def seed_everything(seed: int, deterministic: bool = False) -> None:
    """Seed Python, NumPy and torch; optionally ask torch for deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 (seeds the legacy global RNG that libraries use)
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)


def pick_device(name: str, info: DistInfo) -> torch.device:
    if name == "cuda" or (name == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise ValueError("device cuda requested but no CUDA GPU is available")
        return torch.device("cuda", info.local_rank)
    return torch.device("cpu")


def carried_runtime(cfg: TrainConfig) -> dict[str, float | None]:
    """The inference settings the run's checkpoints carry from the starting model, read from
    its sidecar once: the apex-peak threshold its head was tuned to (the apex-head default
    for a new head, None for a model without one), and its second look at small sprays
    and tiles (`zoom_below`, `tile_short`, spraycv.runtime.zoom; None from scratch)."""
    meta = read_sidecar(Path(cfg.init_weights)) if cfg.init_weights is not None else {}
    threshold = meta.get("apex_threshold")
    if cfg.model.apex_head and threshold is None:
        threshold = ApexHeadConfig().threshold
    return {
        "apex_threshold": float(threshold) if cfg.model.apex_head else None,
        "zoom_below": meta.get("zoom_below"),
        "tile_short": meta.get("tile_short"),
    }


def start_weights(cfg: TrainConfig) -> dict[str, torch.Tensor]:
    """The state dict of cfg.init_weights, checked against cfg.model (fine-tuning)."""
    net, meta = load_checkpoint(Path(cfg.init_weights))
    stored = ModelConfig.model_validate(meta["model"])
    if stored != cfg.model:
        raise ValueError(
            f"init_weights {cfg.init_weights}: its model {dump_config(stored)} differs from "
            f"the config's {dump_config(cfg.model)}"
        )
    return net.state_dict()


def _make_scheduler(cfg: TrainConfig, optimizer: torch.optim.Optimizer, total_steps: int):
    if cfg.max_minutes is not None:  # stops on the clock: decay by time or steps, whichever
        progress = BudgetProgress(total_steps, cfg.max_minutes * 60.0)
        return budget_scheduler(optimizer, cfg.optim.schedule, cfg.optim.warmup_frac, progress)
    if cfg.optim.schedule == "onecycle" and total_steps >= 4:
        # OneCycleLR divides by its warm-up step count: keep at least two warm-up steps
        warmup = min(max(cfg.optim.warmup_frac, 2.5 / total_steps), 0.5)
        return torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=cfg.optim.lr, total_steps=total_steps, pct_start=warmup
        )
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max(total_steps, 1))


def _build_model(
    cfg: TrainConfig,
    device: torch.device,
    info: DistInfo,
    initial_state: Mapping[str, torch.Tensor] | None = None,
) -> nn.Module:
    model = create_model(cfg.model)
    if initial_state is not None:  # fine-tuning: start from trained weights, not from scratch
        model.load_state_dict(initial_state, strict=True)
    if cfg.model.apex_head and cfg.apex_distill is None:  # trained on its own (spraycv
        for p in model.apex.parameters():  # apex-head): frozen here, and DDP then has no
            p.requires_grad_(False)  # unused parameters to reduce
    if cfg.sync_batchnorm and info.enabled and device.type == "cuda":
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    if device.type == "cuda" and cfg.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if info.enabled:
        ids = [device.index] if device.type == "cuda" else None
        model = nn.parallel.DistributedDataParallel(model, device_ids=ids)
    if cfg.compile:
        model = torch.compile(model)
    return model


def train(
    cfg: TrainConfig,
    progress: bool = True,
    *,
    splits: run_data.Splits | None = None,
    initial_state: Mapping[str, torch.Tensor] | None = None,
) -> TrainResult:
    """Train one model as configured; rank 0 writes logs and checkpoints under out_dir/name.

    `splits` replaces the samples read from cfg.train_data/val_data (e.g. a mix of a user's
    images and rendered ones); `initial_state` is a state dict of cfg.model to start from
    instead of a fresh model (fine-tuning). A resumed run's saved state wins over it.
    """
    check_device = torch.device(
        "cuda" if cfg.device != "cpu" and torch.cuda.is_available() else "cpu"
    )
    info = init_distributed(check_device.type)
    try:
        return _train(cfg, info, progress, splits, initial_state)
    finally:
        cleanup(info)


def _loaders(
    cfg: TrainConfig, info: DistInfo, device: torch.device, splits: run_data.Splits
) -> tuple[DataLoader, DataLoader]:
    """The shuffled (distributed) training loader and the validation loader."""
    train_set, val_set = run_data.make_datasets(cfg, splits)
    sampler = DistributedSampler(
        train_set, num_replicas=info.world_size, rank=info.rank, shuffle=True, seed=cfg.seed
    )
    loader = DataLoader(
        train_set,
        batch_size=cfg.batch_size,
        sampler=sampler,
        num_workers=cfg.workers,
        pin_memory=device.type == "cuda",
        drop_last=len(train_set) >= cfg.batch_size * info.world_size,
        persistent_workers=cfg.workers > 0,
        worker_init_fn=run_data.seed_worker,
    )
    val_loader = DataLoader(
        val_set,
        batch_size=cfg.batch_size,
        num_workers=cfg.workers,
        sampler=DistributedSampler(val_set, info.world_size, info.rank, shuffle=False),
    )
    return loader, val_loader


@dataclass
class _Run:
    """One run's parts, built once (`_Run.start`), and its epoch, its validation and its
    checkpoints as short steps."""

    cfg: TrainConfig
    info: DistInfo
    device: torch.device
    splits: run_data.Splits
    loader: DataLoader
    val_loader: DataLoader
    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: Any
    scaler: torch.amp.GradScaler
    steps_per_epoch: int
    io: ModelIO
    run_dir: Path
    precision: str  # cfg.precision resolved for the device ("auto" chosen once)
    average: WeightAverage  # of the plain model: what is validated and saved (cfg.ema_decay)
    loss_fn: nn.Module = field(default_factory=DiceBCELoss)
    teacher: Teacher | None = None  # the starting model (cfg.apex_distill, view_distill)

    @property
    def kept(self) -> nn.Module:
        """The plain model that is validated and saved: the weights' moving average, or the
        weights as trained (ema_decay None)."""
        return self.average.model

    @staticmethod
    def start(
        cfg: TrainConfig,
        info: DistInfo,
        splits: run_data.Splits | None,
        initial_state: Mapping[str, torch.Tensor] | None,
    ) -> _Run:
        device = pick_device(cfg.device, info)
        if cfg.threads is not None:
            torch.set_num_threads(cfg.threads)
        check_precision(cfg.precision, device)
        precision = resolve_precision(cfg.precision, device)
        seed_everything(cfg.seed, cfg.deterministic)
        if device.type == "cuda":
            torch.backends.cudnn.benchmark = not cfg.deterministic
        if initial_state is None and cfg.init_weights is not None:
            initial_state = start_weights(cfg)
        splits = splits if splits is not None else run_data.make_splits(cfg)
        loader, val_loader = _loaders(cfg, info, device, splits)
        model = _build_model(cfg, device, info, initial_state)
        optimizer = torch.optim.AdamW(
            model.parameters(), lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay
        )
        steps = run_data.steps_per_epoch(cfg, len(loader))
        data = cfg.data
        io = ModelIO(
            tuple(data.input_size), tuple(data.mean), tuple(data.std), cfg.threshold,
            exposure=data.exposure,
            resize="keep_aspect",  # fully convolutional: wide frames are not squeezed
            **carried_runtime(cfg),
        )  # fmt: skip
        return _Run(
            cfg, info, device, splits, loader, val_loader, model, optimizer,
            scheduler=_make_scheduler(cfg, optimizer, steps * cfg.epochs),
            scaler=grad_scaler(precision, device),
            steps_per_epoch=steps, io=io, run_dir=Path(cfg.out_dir) / cfg.name,
            precision=precision,
            average=WeightAverage(unwrap(model), cfg.ema_decay),
            loss_fn=DiceBCELoss.from_config(cfg.loss),
            teacher=Teacher.of(cfg, device, initial_state, io.size_multiple, precision),
        )  # fmt: skip

    def step(
        self, images: torch.Tensor, masks: torch.Tensor, taught: torch.Tensor | None = None
    ) -> float:
        """One optimiser step on a batch; its loss. taught: (N,) bool, the rows the
        teacher's terms count on (None: all)."""
        cfg, device = self.cfg, self.device
        images = images.to(device, non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        if device.type == "cuda" and cfg.channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        with autocast(self.precision, device):
            logits = self.model(images)
        loss = self.loss_fn(logits, masks)
        if self.teacher is not None:
            loss = loss + self.teacher.loss(images, logits, taught)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        if cfg.optim.grad_clip is not None:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), cfg.optim.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.average.update()
        return float(loss.detach())

    def epoch(self, epoch: int, progress: bool) -> dict[str, float]:
        """Train one epoch; its mean loss and images per second."""
        self.loader.sampler.set_epoch(epoch)
        self.model.train()
        if self.cfg.freeze_batchnorm:
            freeze_batchnorm(self.model)
        bar = tqdm(
            self.loader,
            total=self.steps_per_epoch,
            desc=f"epoch {epoch + 1}/{self.cfg.epochs}",
            disable=not (progress and self.info.is_main),
            leave=False,
        )
        loss_sum, seen, tic = 0.0, 0, time.monotonic()
        for step, (images, masks, *taught) in enumerate(bar):
            if step >= self.steps_per_epoch:
                break
            loss_sum += self.step(images, masks, *taught) * len(images)
            seen += len(images)
            bar.set_postfix(loss=f"{loss_sum / seen:.4f}")
        return {
            "train_loss": loss_sum / max(seen, 1),
            "train_images_per_s": seen * self.info.world_size / (time.monotonic() - tic),
            "lr": self.scheduler.get_last_lr()[0],
        }

    def validate(self) -> dict[str, float]:
        """Mask metrics on the validation loader, and the cone-angle error of a few images."""
        cfg = self.cfg
        metrics = validate(
            self.kept, self.val_loader, self.device, self.precision, cfg.threshold, self.info,
            self.loss_fn,
        )  # fmt: skip
        if self.info.is_main and cfg.angle_eval_images:
            val = self.splits.val[: cfg.angle_eval_images]
            metrics.update(angle_errors(self.kept, val, self.io, self.device).summary())
        return metrics

    def save(self, epoch: int, metrics: dict, improved: bool, best: dict, history: list) -> None:
        """last (and best, if improved) weights with their sidecars, and the resumable state."""
        sidecar = {
            "model": dump_config(self.cfg.model),
            **self.io.to_sidecar(),
            "train_config": dump_config(self.cfg),
            "trained_precision": self.precision,
            "parameters": count_parameters(self.kept),
            "epoch": epoch,
            "metrics": metrics,
        }
        save_checkpoint(self.run_dir / "last.safetensors", self.kept, sidecar)
        if improved:
            save_checkpoint(self.run_dir / "best.safetensors", self.kept, sidecar)
        steps = epoch * self.steps_per_epoch
        save_state(
            self.run_dir / "last_state.pt", epoch, self.model, self.optimizer, steps,
            self.scaler, best, history, self.average.state_dict(),
        )  # fmt: skip


def _train(
    cfg: TrainConfig,
    info: DistInfo,
    progress: bool,
    splits: run_data.Splits | None = None,
    initial_state: Mapping[str, torch.Tensor] | None = None,
) -> TrainResult:
    run = _Run.start(cfg, info, splits, initial_state)
    logger = RunLogger(run.run_dir, enabled=info.is_main)
    start_epoch, best, history = 0, {"iou": -math.inf}, []
    state_path = run.run_dir / "last_state.pt"
    if cfg.resume and state_path.is_file():
        start_epoch, best, history = restore_state(
            state_path, run.model, run.optimizer, run.scheduler, run.scaler, run.average
        )
    stale, started, epoch = 0, time.monotonic(), start_epoch
    for epoch in range(start_epoch, cfg.epochs):
        row = run.epoch(epoch, progress)
        metrics = run.validate()
        row.update({f"val_{k}": v for k, v in metrics.items()})
        history.append(row)
        logger.log(epoch + 1, row)
        improved = metrics["iou"] > best["iou"]
        best, stale = (dict(metrics), 0) if improved else (best, stale + 1)
        if info.is_main:
            run.save(epoch + 1, metrics, improved, best, history)
            if progress:
                tqdm.write(
                    f"epoch {epoch + 1}: " + ", ".join(f"{k} {v:.4g}" for k, v in row.items())
                )
        out_of_time = (
            cfg.max_minutes is not None and time.monotonic() - started > cfg.max_minutes * 60
        )
        patience_over = cfg.early_stop_patience is not None and stale >= cfg.early_stop_patience
        if any_rank(out_of_time or patience_over, info, run.device):
            break
    logger.close()
    best_weights = run.run_dir / "best.safetensors"
    return TrainResult(run.run_dir, best_weights, epoch + 1, best, history, run.kept)
