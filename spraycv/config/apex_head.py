"""Defaults of `spraycv apex-head`: train a nozzle-apex heatmap head on a frozen model."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from spraycv.config.base import StrictModel
from spraycv.paths import default_checkpoint


class ApexHeadConfig(StrictModel):
    """One apex-head run. The segmentation model stays frozen (its masks do not change), so
    its decoder features are computed once per image and the small head trains on them."""

    weights: Path = Field(default_factory=default_checkpoint)  # the trained model to extend
    data: Path = Path("datasets/train")  # rendered dataset (labels.jsonl has the apexes)
    val_data: Path | None = Path("datasets/val")  # scored after training (None: skip)
    out: Path = Path("runs/apex_head/model.safetensors")
    max_images: int | None = Field(None, ge=1)  # first N training images (None: all)
    flip: bool = True  # also the mirrored image of each: twice the data, same cost per epoch
    epochs: int = Field(20, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(3e-3, gt=0)  # one-cycle peak
    # Fine-tune the checkpoint's own head instead of a fresh one (take a lower lr): the
    # geometry's apex prior was tuned on the shipped head's peaks (experiments row 81).
    keep_head: bool = False
    # Hold the head to this model's apex heat instead of the renderer's apexes: a new network
    # whose head should mark the nozzles the shipped head marks, at the heat the geometry's
    # apex prior was tuned on (experiments row 126). It must read inputs as the model does.
    teacher: Path | None = None
    weight_decay: float = Field(1e-4, ge=0)
    sigma_cells: float = Field(1.5, gt=0)  # Gaussian target width, in heatmap cells (4 px)
    threshold: float = Field(0.2, gt=0, lt=1)  # a peak above this is a likely apex
    seed: int = 0
    threads: int | None = Field(None, ge=1)
    device: str = "cpu"  # "cuda" computes the features and trains the head on the GPU
