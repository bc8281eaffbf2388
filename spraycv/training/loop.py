"""One training run: the same code for one process and for DDP under torchrun."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler
from tqdm import tqdm

from spraycv.config.loader import dump_config
from spraycv.config.train import ModelConfig, TrainConfig
from spraycv.models.registry import count_parameters, create_model
from spraycv.runtime.processing import ModelIO
from spraycv.training import data as run_data
from spraycv.training.checkpoint import load_checkpoint, save_checkpoint, unwrap
from spraycv.training.distributed import DistInfo, any_rank, cleanup, init_distributed
from spraycv.training.evaluate import angle_errors, validate
from spraycv.training.logger import RunLogger
from spraycv.training.losses import DiceBCELoss
from spraycv.training.precision import autocast, check_precision, grad_scaler
from spraycv.training.schedule import BudgetProgress, budget_scheduler
from spraycv.training.state import restore_state, save_state


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


def freeze_batchnorm(model: nn.Module) -> None:
    """Put BatchNorm layers in eval mode: batch statistics no longer enter training."""
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.eval()


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
    if cfg.model.apex_head:  # trained on its own (spraycv apex-head): frozen here, and DDP
        for p in model.apex.parameters():  # then has no unused parameters to reduce
            p.requires_grad_(False)
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


def _train(
    cfg: TrainConfig,
    info: DistInfo,
    progress: bool,
    splits: run_data.Splits | None = None,
    initial_state: Mapping[str, torch.Tensor] | None = None,
) -> TrainResult:
    device = pick_device(cfg.device, info)
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    check_precision(cfg.precision, device)
    seed_everything(cfg.seed, cfg.deterministic)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = not cfg.deterministic
    run_dir = Path(cfg.out_dir) / cfg.name
    if initial_state is None and cfg.init_weights is not None:
        initial_state = start_weights(cfg)
    if splits is None:
        splits = run_data.make_splits(cfg)
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
    model = _build_model(cfg, device, info, initial_state)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay
    )
    steps_per_epoch = run_data.steps_per_epoch(cfg, len(loader))
    scheduler = _make_scheduler(cfg, optimizer, steps_per_epoch * cfg.epochs)
    scaler = grad_scaler(cfg.precision, device)
    loss_fn = DiceBCELoss()
    io = ModelIO(
        tuple(cfg.data.input_size),
        tuple(cfg.data.mean),
        tuple(cfg.data.std),
        cfg.threshold,
        exposure=cfg.data.exposure,
    )
    sidecar_base = {
        "model": dump_config(cfg.model),
        **io.to_sidecar(),
        "train_config": dump_config(cfg),
        "parameters": count_parameters(unwrap(model)),
    }
    logger = RunLogger(run_dir, enabled=info.is_main)
    start_epoch, best, history = 0, {"iou": -math.inf}, []
    state_path = run_dir / "last_state.pt"
    if cfg.resume and state_path.is_file():
        start_epoch, best, history = restore_state(state_path, model, optimizer, scheduler, scaler)
    best_weights, stale, started = run_dir / "best.safetensors", 0, time.monotonic()
    epoch = start_epoch
    for epoch in range(start_epoch, cfg.epochs):
        sampler.set_epoch(epoch)
        model.train()
        if cfg.freeze_batchnorm:
            freeze_batchnorm(model)
        bar = tqdm(
            loader,
            total=steps_per_epoch,
            desc=f"epoch {epoch + 1}/{cfg.epochs}",
            disable=not (progress and info.is_main),
            leave=False,
        )
        loss_sum, seen, tic = 0.0, 0, time.monotonic()
        for step, (images, masks) in enumerate(bar):
            if step >= steps_per_epoch:
                break
            images, masks = (
                images.to(device, non_blocking=True),
                masks.to(device, non_blocking=True),
            )
            if device.type == "cuda" and cfg.channels_last:
                images = images.contiguous(memory_format=torch.channels_last)
            with autocast(cfg.precision, device):
                logits = model(images)
            loss = loss_fn(logits, masks)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if cfg.optim.grad_clip is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), cfg.optim.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            loss_sum += float(loss.detach()) * len(images)
            seen += len(images)
            bar.set_postfix(loss=f"{loss_sum / seen:.4f}")
        train_seconds = time.monotonic() - tic
        metrics = validate(model, val_loader, device, cfg.precision, cfg.threshold, info, loss_fn)
        if info.is_main and cfg.angle_eval_images:
            errs = angle_errors(unwrap(model), splits.val[: cfg.angle_eval_images], io, device)
            metrics.update(errs.summary())
        row = {
            "train_loss": loss_sum / max(seen, 1),
            "train_images_per_s": seen * info.world_size / train_seconds,
            "lr": scheduler.get_last_lr()[0],
            **{f"val_{k}": v for k, v in metrics.items()},
        }
        history.append(row)
        logger.log(epoch + 1, row)
        improved = metrics["iou"] > best["iou"]
        if improved:
            best, stale = dict(metrics), 0
        else:
            stale += 1
        if info.is_main:
            sidecar = {**sidecar_base, "epoch": epoch + 1, "metrics": metrics}
            save_checkpoint(run_dir / "last.safetensors", model, sidecar)
            if improved:
                save_checkpoint(best_weights, model, sidecar)
            save_state(
                state_path,
                epoch + 1,
                model,
                optimizer,
                (epoch + 1) * steps_per_epoch,
                scaler,
                best,
                history,
            )
            if progress:
                tqdm.write(
                    f"epoch {epoch + 1}: " + ", ".join(f"{k} {v:.4g}" for k, v in row.items())
                )
        out_of_time = (
            cfg.max_minutes is not None and time.monotonic() - started > cfg.max_minutes * 60
        )
        patience_over = cfg.early_stop_patience is not None and stale >= cfg.early_stop_patience
        if any_rank(out_of_time or patience_over, info, device):
            break
    logger.close()
    return TrainResult(run_dir, best_weights, epoch + 1, best, history, unwrap(model))
