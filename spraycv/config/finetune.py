"""Fine-tuning defaults: adapt the shipped model to a user's own labelled nozzle photos."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from spraycv.config.base import StrictModel
from spraycv.config.data import AugmentConfig
from spraycv.config.render import RenderConfig
from spraycv.config.train import OptimConfig, Precision
from spraycv.paths import default_checkpoint


def _finetune_optim() -> OptimConfig:
    # half the shipped model's peak rate (4e-3): on 30 images of an unseen camera style,
    # 40 steps at 2e-3 cut the held-out angle MAE by 3-4.5 deg over three seeds, where
    # 5e-4 and 1e-3 cut it by 1.5 (tests/training/test_finetune.py); the rendered images
    # mixed in keep the model from forgetting the conditions the user's set lacks
    return OptimConfig(lr=2e-3, schedule="onecycle", warmup_frac=0.1)


class FinetuneConfig(StrictModel):
    """One fine-tuning run (`spraycv finetune`): start weights, data, mix, budget, output.

    The model, its input size and normalisation come from the start checkpoint's sidecar;
    the augmentation is the one it was trained with unless `augment` is set.
    """

    weights: Path = Field(default_factory=default_checkpoint)  # the shipped model by default
    data: Path | None = None  # the user's labelled images: folder, COCO or LabelMe
    data_format: str = "auto"  # auto | folder | coco | labelme
    labels: list[str] | None = None  # COCO categories / LabelMe labels to keep (None: all)
    # held-out images: a separate labelled set, or a seeded share split off `data`
    holdout: Path | None = None
    holdout_fraction: float = Field(0.3, gt=0, lt=1)
    split_seed: int = 0
    # rendered images mixed into training so the model keeps what it knew: a renderer
    # dataset folder, or (None) a few rendered on the fly into a temporary folder
    synthetic: Path | None = None
    mix_ratio: float = Field(0.5, ge=0, lt=1)  # share of rendered images among training images
    render_max: int = Field(64, ge=0)  # on-the-fly renders at most (rendering costs time)
    render_size: int = Field(256, ge=64)
    render_seed: int = 0
    render: RenderConfig = Field(default_factory=RenderConfig)
    # budget: `steps` (optimiser steps in all) wins over `epochs` when set
    epochs: int = Field(8, ge=1)
    steps: int | None = Field(None, ge=1)
    batch_size: int = Field(8, ge=1)
    optim: OptimConfig = Field(default_factory=_finetune_optim)
    augment: AugmentConfig | None = None  # None: the start model's training augmentation
    freeze_batchnorm: bool = False  # True keeps the start model's BatchNorm statistics
    # the apex head (frozen while the network trains) re-fitted afterwards to the new
    # features, against the apexes of the training label masks (spraycv.training.finetune)
    refit_apex_head: bool = True
    seed: int = 0
    precision: Precision = "auto"  # as TrainConfig.precision
    device: Literal["auto", "cpu", "cuda"] = "auto"
    workers: int = Field(0, ge=0)
    threads: int | None = Field(None, ge=1)  # CPU threads for torch (None: torch's default)
    out: Path = Path("weights/finetuned.safetensors")  # the new checkpoint (+ .json sidecar)
    work_dir: Path = Path("runs/finetune")  # the training run's logs and checkpoints

    @model_validator(mode="after")
    def _check(self) -> FinetuneConfig:
        if self.out.suffix != ".safetensors":
            raise ValueError(f"out must be a .safetensors file; got {self.out}")
        return self
