"""Train the refiner on canonical crops, resumable from its last state at any moment."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from spraycv.config.loader import dump_config
from spraycv.config.refine import RefinerTrainConfig
from spraycv.io.exposure import Exposure
from spraycv.models.apex_head import WithApexHead
from spraycv.models.registry import count_parameters, create_model
from spraycv.refine.blur import random_kernel
from spraycv.refine.data import CropSource, jittered_pose
from spraycv.refine.edges import READ_BAND
from spraycv.refine.frozen import train_mode, trained_parameters
from spraycv.refine.losses import batch_loss
from spraycv.refine.negatives import (
    as_target,
    load_negatives,
    mine_negatives,
    random_negative,
    save_negatives,
)
from spraycv.refine.pose import to_crop
from spraycv.refine.validation import CropValidation, NegativeValidation, summary, val_metrics
from spraycv.runtime.processing import ModelIO, preprocess
from spraycv.training.average import WeightAverage
from spraycv.training.checkpoint import load_checkpoint, save_checkpoint
from spraycv.training.precision import autocast, check_precision, resolve_precision

_CPU = torch.device("cpu")  # the refiner trains on the CPU


def initial_model(cfg: RefinerTrainConfig) -> tuple[nn.Module, ModelIO]:
    """The refiner network (from `init_weights` when set) and its input/output contract."""
    model = create_model(cfg.model)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    exposure = Exposure()
    if cfg.init_weights is not None:
        trained, meta = load_checkpoint(cfg.init_weights)
        state = {k.removeprefix("net."): v for k, v in trained.state_dict().items()}
        with_channel = isinstance(model, WithApexHead)
        (model.net if with_channel else model).load_state_dict(
            {k: v for k, v in state.items() if k.split(".")[0] not in ("apex", "apex_fine")}
        )
        if with_channel and isinstance(trained, WithApexHead):  # a refiner's own apex channel
            model.apex.load_state_dict(trained.apex.state_dict())
            if model.apex_fine is not None and trained.apex_fine is not None:
                model.apex_fine.load_state_dict(trained.apex_fine.state_dict())
        norm = meta["normalization"]
        mean, std = tuple(norm["mean"]), tuple(norm["std"])
        exposure = Exposure(**norm.get("exposure", {}))
    exposure = cfg.exposure or exposure
    return model, ModelIO((cfg.crop_size, cfg.crop_size), mean, std, 0.5, exposure=exposure)


def _photometric(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exposure, gamma and sensor noise, so the crop model sees the cameras' range."""
    x = crop.astype(np.float32) / 255.0
    x = np.clip(x * rng.uniform(0.6, 1.4), 0, 1) ** rng.uniform(0.7, 1.4)
    x = x + rng.normal(0, rng.uniform(0, 0.025), x.shape).astype(np.float32)
    return (np.clip(x, 0, 1) * 255 + 0.5).astype(np.uint8)


class Negatives:
    """The crops without a plume a run learns from (spraycv.refine.negatives); the mined poses
    of every VAL_EVERY-th frame are held out to watch the refiner draw nothing on them."""

    VAL_EVERY = 10

    def __init__(self, source: CropSource, cfg: RefinerTrainConfig, files: RunFiles, log=print):
        mined = _mined(source, cfg, files, log)
        self.train = [n for n in mined if n.frame % self.VAL_EVERY]
        self.val = [n for n in mined if not n.frame % self.VAL_EVERY]
        self.empty_frames = [f for f in source.empty_frames if f % self.VAL_EVERY]
        if not (self.train or self.empty_frames):
            raise ValueError(f"{source.name}: no false reading and no frame without spray")

    def draw(
        self,
        source: CropSource,
        cfg: RefinerTrainConfig,
        rng: np.random.Generator,
        blur: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """One (image crop, empty target): half mined (jittered), half random."""
        if self.empty_frames and (not self.train or rng.random() < 0.5):
            frame = self.empty_frames[rng.integers(len(self.empty_frames))]
            pose = random_negative(frame, source.images[frame].shape[:2], rng).pose()
        else:
            negative = self.train[rng.integers(len(self.train))]
            frame, pose = negative.frame, jittered_pose(as_target(negative), cfg.jitter, rng)
        return source.empty_crop(frame, pose, cfg.crop_size, blur)


def _mined(source: CropSource, cfg: RefinerTrainConfig, files: RunFiles, log) -> list:
    """The false readings of `cfg.mine_weights` on the training frames, mined on the first
    start of a run and read back from its folder on every resume."""
    path = files.dir / "negatives.jsonl"
    if path.is_file():
        return load_negatives(path)
    if cfg.mine_weights is None:
        return []
    from spraycv.measure import load_measurer

    measurer = load_measurer(cfg.mine_weights, threads=cfg.threads, refine=False)
    log(f"mining false readings of {cfg.mine_weights} on {len(source.images)} frames")
    mined = mine_negatives(source.images, source.instances, source.records, measurer,
                           cfg.crop_size)  # fmt: skip
    save_negatives(path, mined)
    return mined


class CropBatch(NamedTuple):
    """A training batch: (B, 3, S, S) normalised crops, (B, 1, S, S) soft truth, (B, 2) the
    true apex (col, row) in crop pixels (NaN on a crop without a plume) and (B,) bool: the
    crops a teacher counts on (`RefinerTrainConfig.untaught_styles`)."""

    images: torch.Tensor
    truths: torch.Tensor
    apexes: torch.Tensor
    taught: torch.Tensor


def make_batch(
    source: CropSource,
    cfg: RefinerTrainConfig,
    io: ModelIO,
    rng: np.random.Generator,
    negatives: Negatives | None = None,
) -> CropBatch:
    """Crops at jittered poses around the truth; a share `cfg.negative_frac` of them without
    a plume when `negatives` are given, a share `cfg.blur.frac` of all of them blurred as a
    camera blurs (the truth not)."""
    crops, truths, apexes, taught = [], [], [], []
    for i in rng.integers(0, len(source.targets), cfg.batch_size):
        # no draw without blur: the random stream of runs without it stays as it was
        blur = (
            random_kernel(cfg.blur, rng) if cfg.blur.frac and rng.random() < cfg.blur.frac else None
        )
        if negatives is not None and rng.random() < cfg.negative_frac:
            image, truth = negatives.draw(source, cfg, rng, blur)
            apex, style = np.full(2, np.nan), None
        else:
            target = source.targets[i]
            pose = jittered_pose(target, cfg.jitter, rng)
            image, truth, transform = source.crop(target, pose, cfg.crop_size, blur)
            apex = to_crop(np.asarray([target.apex]), transform)[0]
            style = source.records[target.frame].get("style")
        if rng.random() < 0.5:  # the mirror image is a plume too (left and right swap)
            image, truth = image[:, ::-1], truth[:, ::-1]
            apex = np.array([cfg.crop_size - 1 - apex[0], apex[1]])
        crops.append(_photometric(np.ascontiguousarray(image), rng))
        truths.append(np.ascontiguousarray(truth))
        apexes.append(apex)
        taught.append(style not in cfg.untaught_styles)
    return CropBatch(
        torch.from_numpy(preprocess(crops, io)),
        torch.from_numpy(np.stack(truths)[:, None]),
        torch.from_numpy(np.stack(apexes).astype(np.float32)),
        torch.tensor(taught),
    )


class Teacher:
    """A frozen refiner whose logits a run learns beside the truth (distillation)."""

    def __init__(self, model: nn.Module):
        self.model = model.eval().requires_grad_(False)

    @classmethod
    def load(cls, weights: Path) -> Teacher:
        return cls(load_checkpoint(weights)[0])

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return self.model(images)


def lr_at(step: int, cfg: RefinerTrainConfig) -> float:
    """Linear warm-up, then cosine down to 5 % of the peak."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    done = (step - cfg.warmup_steps) / max(cfg.steps - cfg.warmup_steps, 1)
    return cfg.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(done, 1.0))))


class RunFiles:
    """runs/NAME: last_state.pt (resumable), last/best.safetensors, log.jsonl."""

    def __init__(self, cfg: RefinerTrainConfig):
        self.dir = Path(cfg.out_dir) / cfg.name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.state = self.dir / "last_state.pt"
        self.last = self.dir / "last.safetensors"
        self.best = self.dir / "best.safetensors"
        self.log = self.dir / "log.jsonl"

    def append_log(self, row: dict) -> None:
        with self.log.open("a") as fh:
            fh.write(json.dumps(row) + "\n")


def _save_state(files: RunFiles, model, optimizer, step, best, rng, kept: WeightAverage) -> None:
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
        "best": best,
        "rng": json.dumps(rng.bit_generator.state),
        "average": kept.state_dict(),
    }
    tmp = files.state.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(files.state)  # atomic: an interrupted save keeps the previous state


def _restore(files: RunFiles, model, optimizer, rng, kept: WeightAverage) -> tuple[int, float]:
    if not files.state.is_file():
        return 0, math.inf
    state = torch.load(files.state, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    kept.load_state_dict(state.get("average"))
    rng.bit_generator.state = json.loads(state["rng"])
    return int(state["step"]), float(state["best"])


def _refiner_sidecar(
    cfg: RefinerTrainConfig, io: ModelIO, model: nn.Module, precision: str
) -> dict:
    """The sidecar every checkpoint of the run gets: model, I/O, read band, config, the
    precision it trains in (what auto became), size."""
    return {
        "model": dump_config(cfg.model),
        **io.to_sidecar(),
        "refiner": {"band": list(READ_BAND)},
        "train_config": dump_config(cfg),
        "trained_precision": precision,
        "parameters": count_parameters(model),
    }


def train_refiner(cfg: RefinerTrainConfig, log=print) -> RunFiles:
    """Train (or resume) a refiner; checkpoints every `checkpoint_every_s` and at the end."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    check_precision(cfg.precision, _CPU)
    precision = resolve_precision(cfg.precision, _CPU)  # what auto becomes, once
    files, rng = RunFiles(cfg), np.random.default_rng(cfg.seed)
    model, io = initial_model(cfg)
    optimizer = torch.optim.AdamW(trained_parameters(model, cfg), lr=cfg.lr,
                                  weight_decay=cfg.weight_decay)  # fmt: skip
    kept = WeightAverage(model, cfg.ema_decay)
    teacher = Teacher.load(cfg.teacher_weights) if cfg.teacher_weights else None
    step, best = _restore(files, model, optimizer, rng, kept)
    train_src = CropSource(cfg.train_data, cfg.max_train_images)
    val = CropValidation(CropSource(cfg.val_data), cfg)
    negatives = Negatives(train_src, cfg, files, log) if cfg.negative_frac > 0 else None
    val_negatives = NegativeValidation(train_src, negatives.val, cfg) if negatives else None
    sidecar = _refiner_sidecar(cfg, io, model, precision)
    log(f"refiner: {len(train_src.targets)} training nozzles, step {step}/{cfg.steps}, "
        f"precision {precision}, "
        f"truth floor {summary(val.truth_errors())}")  # fmt: skip
    started, saved, loss_sum, seen = time.monotonic(), time.monotonic(), 0.0, 0
    while step < cfg.steps:
        train_mode(model, cfg)
        batch = make_batch(train_src, cfg, io, rng, negatives)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, cfg)
        with autocast(precision, _CPU):
            teacher_logits = teacher(batch.images) if teacher is not None else None
            logits = model(batch.images)
        teacher_logits = None if teacher_logits is None else teacher_logits.float()
        loss = batch_loss(
            logits.float(), batch.truths, batch.apexes, cfg, teacher_logits, batch.taught
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        kept.update()
        step, loss_sum, seen = step + 1, loss_sum + float(loss.detach()), seen + 1
        out_of_time = (
            cfg.max_minutes is not None and time.monotonic() - started > cfg.max_minutes * 60
        )
        due = time.monotonic() - saved > cfg.checkpoint_every_s
        if due or out_of_time or step == cfg.steps:
            metrics = val_metrics(val, val_negatives, kept.model, io)
            row = {"step": step, "loss": loss_sum / seen, "lr": lr_at(step, cfg), **metrics,
                   "minutes": (time.monotonic() - started) / 60}  # fmt: skip
            files.append_log(row)
            log(json.dumps(row))
            meta = {**sidecar, "step": step, "metrics": metrics}
            save_checkpoint(files.last, kept.model, meta)
            if metrics["mae"] < best:
                best = metrics["mae"]
                save_checkpoint(files.best, kept.model, meta)
            _save_state(files, model, optimizer, step, best, rng, kept)
            saved, loss_sum, seen = time.monotonic(), 0.0, 0
        if out_of_time:
            break
    return files
