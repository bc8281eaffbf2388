"""Train a nozzle-apex heatmap head (spraycv.models.apex_head) on a frozen trained model.

The segmentation network is frozen, so its decoder features are computed once per image
(and its mirror) and the head, a few thousand parameters, trains on them in minutes on a
CPU. Targets are Gaussians at the renderer's nozzle apexes on the head's 1/4 grid; the loss
is CenterNet's penalty-reduced focal loss, which suits one positive cell among thousands.
With a teacher, the targets are instead the teacher head's heat on the same views.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from spraycv.config.apex_head import ApexHeadConfig
from spraycv.evaluation.heldout import read_records
from spraycv.io.images import read_image
from spraycv.models.apex_head import APEX_STRIDE, WithApexHead
from spraycv.models.registry import count_parameters
from spraycv.runtime.processing import ModelIO, apex_points, preprocess
from spraycv.training.checkpoint import load_checkpoint, save_checkpoint
from spraycv.training.losses import heat_distill_loss

Points = list[tuple[float, float]]

TEACHER_PEAK_WEIGHT = 20.0  # a cell's weight against the teacher (losses.heat_distill_loss)


@dataclass(frozen=True)
class HeadViews:
    """What a head trains on, per view (an image or its mirror): the frozen decoder features
    (M, C, h, w) float16, the apexes in heatmap cells, and with a teacher its head's logits
    (M, 1, h, w) float16 on the same view (None without one)."""

    feats: torch.Tensor
    points: list[Points]
    teacher_heat: torch.Tensor | None = None


@dataclass(frozen=True)
class ApexScore:
    """Peaks against visible in-image apexes: a peak matches within max(10 px, 0.2 L)."""

    images: int
    apexes: int
    recall: float
    precision: float
    frames_all_found: float

    def line(self) -> str:
        return (
            f"{self.images} images, {self.apexes} apexes: recall {self.recall:.3f}, "
            f"precision {self.precision:.3f}, all found on {100 * self.frames_all_found:.1f}%"
        )


def visible_apexes(record: dict[str, Any]) -> list[tuple[float, float, float]]:
    """(x, y, length_px) of a rendered record's spraying nozzles whose apex is in the image."""
    h, w = record["height"], record["width"]
    out = []
    for nz in record["nozzles"]:
        x, y = (float(v) for v in nz["apex"])
        if nz.get("visible", nz.get("state") != "off") and 0 <= x < w and 0 <= y < h:
            out.append((x, y, float(nz.get("length_px", 0.0) or 0.0)))
    return out


def heatmap_targets(points: list[Points], grid: tuple[int, int], sigma: float) -> torch.Tensor:
    """(N, 1, gh, gw) Gaussian targets, 1 at each apex cell; points are in grid cells."""
    gh, gw = grid
    yy, xx = torch.meshgrid(torch.arange(gh).float(), torch.arange(gw).float(), indexing="ij")
    out = torch.zeros(len(points), 1, gh, gw)
    for i, pts in enumerate(points):
        for cx, cy in pts:
            # snap the peak to the apex's cell, so every apex has a cell of exactly 1
            g = torch.exp(
                -((xx - math.floor(cx)) ** 2 + (yy - math.floor(cy)) ** 2) / (2 * sigma**2)
            )
            out[i, 0] = torch.maximum(out[i, 0], g)
    return out


def focal_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss, normalised by the number of apexes."""
    p = torch.sigmoid(logits.float()).clamp(1e-4, 1 - 1e-4)
    pos = target.ge(1.0 - 1e-6).float()
    pos_term = -torch.log(p) * (1 - p) ** 2 * pos
    neg_term = -torch.log(1 - p) * p**2 * (1 - target) ** 4 * (1 - pos)
    return (pos_term.sum() + neg_term.sum()) / pos.sum().clamp(min=1.0)


def teacher_loss(logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """A head against its teacher's heat, weighted towards the teacher's peaks."""
    return heat_distill_loss(logits, teacher_logits, TEACHER_PEAK_WEIGHT)


def view_features(
    model: WithApexHead,
    views: Iterable[tuple[np.ndarray, Points]],
    io: ModelIO,
    flip: bool = True,
    device: str | torch.device = "cpu",
    teacher: WithApexHead | None = None,
) -> HeadViews:
    """Frozen decoder features of each (image, apexes in image pixels) view, and of its
    mirror with `flip`, with each one's apexes in heatmap cells and the teacher's heat."""
    h, w = io.input_size
    feats, points, heat = [], [], []
    for image, apexes in views:
        sy, sx = h / image.shape[0] / APEX_STRIDE, w / image.shape[1] / APEX_STRIDE
        pts = [(x * sx, y * sy) for x, y in apexes]
        pairs = [(image, pts)]
        if flip:
            pairs.append((image[:, ::-1].copy(), [(w / APEX_STRIDE - x, y) for x, y in pts]))
        for view, view_pts in pairs:
            x = torch.from_numpy(preprocess([view], io)).to(device)
            with torch.no_grad():
                _, f = model.features(x)
                if teacher is not None:
                    heat.append(teacher.apex(teacher.features(x)[1]).half().cpu())
            feats.append(f.half().cpu())
            points.append(view_pts)
    if not feats:
        raise ValueError("no images to compute apex-head features on")
    return HeadViews(torch.cat(feats), points, torch.cat(heat) if heat else None)


def _record_views(
    dataset: Path, records: list[dict[str, Any]], progress: bool
) -> Iterator[tuple[np.ndarray, Points]]:
    """Each rendered record's image and its visible in-image apexes (image pixels)."""
    for rec in tqdm(records, desc="features", disable=not progress):
        yield read_image(dataset / rec["image"]), [(x, y) for x, y, _ in visible_apexes(rec)]


def _targets(
    views: HeadViews, sigma_cells: float
) -> tuple[torch.Tensor, Callable[[torch.Tensor, torch.Tensor], torch.Tensor], str]:
    """The targets (M, 1, h, w) a head learns, its loss and the loss's name."""
    if views.teacher_heat is not None:
        return views.teacher_heat, teacher_loss, "teacher"
    grid = (views.feats.shape[2], views.feats.shape[3])
    return heatmap_targets(views.points, grid, sigma_cells), focal_loss, "focal"


def fit_head(
    head: nn.Module,
    views: HeadViews,
    cfg: ApexHeadConfig,
    log: Callable[[str], None] = print,
) -> None:
    """Train `head` in place on the views' features: against the teacher's heat where there
    is one (`teacher_loss`), else against Gaussian targets at the apexes (`focal_loss`);
    AdamW with a one-cycle rate, `cfg.epochs` passes."""
    feats = views.feats
    targets, loss_fn, name = _targets(views, cfg.sigma_cells)
    head.requires_grad_(True).train()  # a head frozen by the training loop trains here
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    per_epoch = max(len(feats) // cfg.batch_size, 1)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=cfg.epochs * per_epoch)
    for epoch in range(cfg.epochs):
        order = torch.randperm(len(feats))
        total = 0.0
        for k in range(per_epoch):
            idx = order[k * cfg.batch_size : (k + 1) * cfg.batch_size]
            x, t = feats[idx].to(cfg.device).float(), targets[idx].to(cfg.device)
            loss = loss_fn(head(x), t)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        log(f"epoch {epoch + 1}/{cfg.epochs}: {name} loss {total / per_epoch:.4f}")
    head.eval()


def score_apexes(
    model: nn.Module, dataset: Path, io: ModelIO, limit: int | None = None, device: str = "cpu"
) -> ApexScore:
    """Run the full model on a rendered dataset and match its apex peaks to the truth."""
    records = read_records(dataset)[:limit]
    found = truth = peaks = frames_ok = 0
    for rec in records:
        image = read_image(dataset / rec["image"])
        with torch.no_grad():
            logits = model(torch.from_numpy(preprocess([image], io)).to(device)).cpu().numpy()
        (pts,) = apex_points(logits, [image.shape[:2]], io)
        used: set[int] = set()
        missed = 0
        for x, y, length in visible_apexes(rec):
            limit_px = max(10.0, 0.2 * length)
            d = [(math.hypot(px - x, py - y), j) for j, (px, py) in enumerate(pts) if j not in used]
            near = [e for e in d if e[0] <= limit_px]
            if near:
                used.add(min(near)[1])
            else:
                missed += 1
            truth += 1
        found += len(used)
        peaks += len(pts)
        frames_ok += missed == 0
    return ApexScore(
        images=len(records),
        apexes=truth,
        recall=found / max(truth, 1),
        precision=found / max(peaks, 1),
        frames_all_found=frames_ok / max(len(records), 1),
    )


def load_teacher(path: Path, io: ModelIO, device: str = "cpu") -> WithApexHead:
    """The frozen model whose apex heat a head learns (ApexHeadConfig.teacher); it must
    read its inputs as the trained model does, or its heat would belong to other views."""
    teacher, meta = load_checkpoint(path)
    if not meta["model"].get("apex_head"):
        raise ValueError(f"{path}: the teacher has no apex head to learn the heat of")
    theirs = ModelIO.from_sidecar(meta)
    if (theirs.input_size, theirs.mean, theirs.std, theirs.exposure) != (
        io.input_size, io.mean, io.std, io.exposure
    ):  # fmt: skip
        raise ValueError(
            f"{path}: the teacher reads its inputs otherwise than the model does "
            "(input size, normalization or exposure step)"
        )
    return teacher.to(device).eval()


def train_apex_head(
    cfg: ApexHeadConfig, progress: bool = True, log: Callable[[str], None] = print
) -> tuple[Path, ApexScore | None]:
    """Add (or retrain) the apex head of `cfg.weights`, save the model to `cfg.out`."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    net, meta = load_checkpoint(cfg.weights)
    has_head = bool(meta["model"].get("apex_head"))
    if cfg.keep_head and not has_head:
        raise ValueError(f"{cfg.weights}: keep_head, but the model has no apex head to keep")
    # Retrain: a fresh head on the same segmentation network, unless told to keep its own.
    model = net if cfg.keep_head else WithApexHead(net.net if has_head else net)
    model = model.to(cfg.device).eval()
    io = ModelIO.from_sidecar({**meta, "apex_threshold": cfg.threshold})
    teacher = load_teacher(Path(cfg.teacher), io, cfg.device) if cfg.teacher else None
    tic = time.perf_counter()
    records = read_records(Path(cfg.data))[: cfg.max_images]
    if not records:
        raise ValueError(f"{cfg.data}: no images in labels.jsonl")
    views = _record_views(Path(cfg.data), records, progress)
    head_views = view_features(model, views, io, cfg.flip, cfg.device, teacher)
    log(f"features of {len(head_views.feats)} views in {time.perf_counter() - tic:.0f} s")
    fit_head(model.apex, head_views, cfg, log)
    model.eval()
    val = Path(cfg.val_data) if cfg.val_data else None
    score = score_apexes(model, val, io, device=cfg.device) if val else None
    if score is not None:
        log(f"validation: {score.line()}")
    sidecar = {
        **{k: v for k, v in meta.items() if k not in ("format", "spraycv_version", "created")},
        "model": {**meta["model"], "apex_head": True},
        "parameters": count_parameters(model),
        **io.to_sidecar(),
        "apex_head": {
            "data": str(cfg.data),
            "views": len(head_views.feats),
            "teacher": None if cfg.teacher is None else str(cfg.teacher),
            "epochs": cfg.epochs,
            "lr": cfg.lr,
            "kept_head": cfg.keep_head,
            "seconds": round(time.perf_counter() - tic, 1),
            "validation": None if score is None else score.__dict__,
        },
    }
    dtype = torch.float16 if meta.get("weights_dtype") == "float16" else None
    return save_checkpoint(Path(cfg.out), model.cpu(), sidecar, dtype=dtype), score
