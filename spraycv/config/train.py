"""Training defaults: model, optimiser, precision, distribution, budget, checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from spraycv.config.architectures import get_architecture
from spraycv.config.base import DataFolders, StrictModel
from spraycv.config.data import DataConfig

PrecisionName = Literal["32", "16-mixed", "bf16-mixed", "auto"]
# `precision=32` on the command line parses as an int
Precision = Annotated[
    PrecisionName, BeforeValidator(lambda value: str(value) if isinstance(value, int) else value)
]


class ModelConfig(StrictModel):
    """Which network to build (see spraycv.config.architectures.ARCHITECTURES)."""

    arch: str = "Unet"
    encoder: str = "mobilenet_v2"
    encoder_weights_path: Path | None = None  # local file only; nothing is downloaded
    kwargs: dict[str, Any] = Field(default_factory=dict)  # extra smp arguments
    # an apex heatmap head on the decoder (spraycv.models.apex_head); it is added to a
    # trained model and trained on its own by `spraycv apex-head`; `spraycv train` keeps it
    # frozen, or trains it held to its starting heatmap (TrainConfig.apex_distill)
    apex_head: bool = False
    # a full-resolution 3x3 correction added to the apex head's quarter-resolution logits
    # (WithApexHead.fine): places an apex between pixels, not between quarter-pixel cells
    apex_fine: bool = False

    @field_validator("arch")
    @classmethod
    def _known_arch(cls, value: str) -> str:
        get_architecture(value)  # raises with the list of valid names
        return value

    @field_validator("encoder")
    @classmethod
    def _current_encoder(cls, value: str) -> str:
        from spraycv.models.encoders import require_current_encoder

        # smp's `timm-` names warn and are due for removal; the message names the fix
        return require_current_encoder(value)


class OptimConfig(StrictModel):
    """AdamW with a cosine or one-cycle schedule."""

    lr: float = Field(2e-3, gt=0)
    weight_decay: float = Field(1e-4, ge=0)
    schedule: Literal["cosine", "onecycle"] = "onecycle"
    warmup_frac: float = Field(0.1, ge=0, lt=1)  # one-cycle: share of steps spent warming up
    grad_clip: float | None = Field(1.0, gt=0)


class LossConfig(StrictModel):
    """The mask loss (spraycv.training.losses.DiceBCELoss): BCE plus soft Dice, the BCE
    weighted up within `boundary_px` of the true boundary by `boundary_weight` (0: off) and
    averaged over the hardest `hard_pixel_frac` of the pixels (1: all of them), plus
    `lovasz_weight` x the Lovasz hinge, a surrogate of each image's IoU (0: off)."""

    bce_weight: float = Field(1.0, ge=0)
    dice_weight: float = Field(1.0, ge=0)
    boundary_weight: float = Field(0.0, ge=0)
    boundary_px: int = Field(3, ge=1, le=32, description="half-width of the band, input px")
    hard_pixel_frac: float = Field(1.0, gt=0, le=1, description="share of pixels the BCE keeps")
    lovasz_weight: float = Field(0.0, ge=0)


class ViewDistillConfig(StrictModel):
    """A loss that pulls the mask channel towards the starting model's logits averaged over
    views of the batch: the batch resized by each of `scales` and, with `mirror`, each of
    those mirrored; each view's logits resized back. On the held-out set the shipped model's
    mean over the frame, its mirror and both upscaled 1.25 x reads IoU 0.9402 end to end,
    against 0.9379 in one pass (experiments row 193), for about five times the network's time."""

    weight: float = Field(1.0, gt=0)
    scales: list[float] = Field(default_factory=lambda: [1.0], min_length=1)
    mirror: bool = True

    @field_validator("scales")
    @classmethod
    def _positive(cls, scales: list[float]) -> list[float]:
        if any(f <= 0 for f in scales):
            raise ValueError(f"view_distill.scales must be positive, got {scales}")
        return scales


class TrainConfig(StrictModel):
    """Everything one training run needs; YAML files under configs/ override these defaults."""

    name: str = "unet_mobilenet_v2"
    train_data: DataFolders = Field(default_factory=lambda: [Path("datasets/train")])
    val_data: Path | None = None  # None: split off train_data by data.split_fractions
    data: DataConfig = Field(default_factory=DataConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    loss: LossConfig = Field(default_factory=LossConfig)
    epochs: int = Field(20, ge=1)
    # wall-time budget, for fair comparisons: the schedule then decays by time or by steps,
    # whichever runs out first (spraycv.training.schedule)
    max_minutes: float | None = Field(None, gt=0)
    max_train_images: int | None = Field(None, ge=1)  # cap on images per epoch
    batch_size: int = Field(8, ge=1)  # per process
    workers: int = Field(2, ge=0)
    # auto: bf16 mixed where the device computes bf16 natively (a CPU with AVX512-BF16 trains
    # 1.9 x faster at the same validation IoU, experiments row 224), fp32 elsewhere
    precision: Precision = "auto"
    channels_last: bool = True  # applied on CUDA only
    compile: bool = False
    sync_batchnorm: bool = False  # CUDA only (PyTorch has no CPU SyncBatchNorm)
    # BatchNorm as a fixed affine layer (running stats frozen): for tiny per-process batches,
    # and what makes DDP training match one process exactly
    freeze_batchnorm: bool = False
    early_stop_patience: int | None = Field(5, ge=1)
    # an exponential moving average of the weights is validated and saved (None: the
    # weights as trained); at batch 32, 0.99 averages about the last 3,200 images
    ema_decay: float | None = Field(None, gt=0, lt=1)
    seed: int = 0
    deterministic: bool = False
    threshold: float = Field(0.5, gt=0, lt=1)
    angle_eval_images: int = Field(64, ge=0)  # val images measured for the cone-angle error
    out_dir: Path = Path("runs")
    resume: bool = False
    # fine-tuning: start from this checkpoint's weights (its model must match `model`); a
    # resumed run's saved state wins over it
    init_weights: Path | None = None
    # fine-tuning a model with an apex head: the weight of a loss that holds the apex
    # channel to what `init_weights` outputs on the same batch (a frozen copy), so the head
    # is trained with the decoder and keeps the peaks the geometry was tuned on (a head
    # retrained afterwards finds apexes as well yet misses more nozzles: experiments rows
    # 37, 38, 45). None: the head stays frozen
    apex_distill: float | None = Field(None, gt=0)
    # fine-tuning: the mask channel pulled towards what `init_weights` outputs averaged over
    # views of each batch (a test-time average learnt into one pass). None: off
    view_distill: ViewDistillConfig | None = None
    # frames of these render styles (their labels.jsonl `style`) learn the truth alone: the
    # terms against the starting model (apex_distill, view_distill) leave them out, so a
    # look it reads wrongly is not held to it (experiments row 197)
    untaught_styles: list[str] = Field(default_factory=list)
    device: Literal["auto", "cpu", "cuda"] = "auto"
    # CPU threads for torch (None: torch's default); 1 avoids thrashing on a shared machine
    threads: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _distill_needs_a_head_to_keep(self) -> TrainConfig:
        if self.apex_distill is not None and not (self.model.apex_head and self.init_weights):
            raise ValueError(
                "apex_distill keeps a trained apex head: it needs model.apex_head: true and "
                "init_weights (the checkpoint whose head is kept)"
            )
        if self.view_distill is not None and not self.init_weights:
            raise ValueError(
                "view_distill learns a trained model's average over views: it needs init_weights"
            )
        if self.untaught_styles and self.apex_distill is None and self.view_distill is None:
            raise ValueError("untaught_styles needs a teacher (apex_distill or view_distill)")
        return self
