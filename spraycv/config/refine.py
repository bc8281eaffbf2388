"""Training defaults of the near-orifice refiner (spraycv.refine)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from spraycv.config.base import DataFolders, StrictModel
from spraycv.config.train import ModelConfig, Precision
from spraycv.io.exposure import Exposure


class PoseJitter(StrictModel):
    """How far training crops stray from the true pose, as the coarse reading does
    (standard deviations; measured on the held-out set, docs/experiments.md)."""

    apex_frac: float = Field(0.03, ge=0)  # apex shift, share of the spray length
    apex_px: float = Field(2.0, ge=0)  # plus this many pixels
    axis_deg: float = Field(3.0, ge=0)
    length_frac: float = Field(0.12, ge=0)  # log-normal spread of the length
    half_angle_deg: float = Field(5.0, ge=0)  # error of the angle that sizes the crop


class CropBlur(StrictModel):
    """Camera blur of training crops (spraycv.refine.blur): defocus or motion, in image px."""

    frac: float = Field(0.0, ge=0, le=1)  # the share of crops blurred (0: none)
    gaussian_px: tuple[float, float] = (0.5, 4.0)  # defocus: the Gaussian's sigma
    motion_px: tuple[float, float] = (3.0, 12.0)  # motion: the streak's length


class RefinerTrainConfig(StrictModel):
    """One refiner training run: rendered data in, runs/NAME/{last,best}.safetensors out."""

    name: str = "refiner"
    # one rendered set or several (their crops mixed, as a set of far views beside the
    # standard one); `max_train_images` frames of each
    train_data: DataFolders = Field(default_factory=lambda: [Path("datasets/train")])
    val_data: Path = Path("datasets/val")
    # start from a trained full-frame model (its segmentation weights): fine-tuning, not
    # training from scratch; None builds `model` fresh
    init_weights: Path | None = Path("weights/default.safetensors")
    model: ModelConfig = Field(
        default_factory=lambda: ModelConfig(
            arch="Unet",
            encoder="tu-tf_mobilenetv3_small_100",
            kwargs={"decoder_channels": [128, 64, 32, 16, 16]},
        )
    )
    crop_size: int = Field(128, ge=32, multiple_of=32)
    batch_size: int = Field(16, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-4, ge=0)
    steps: int = Field(20000, ge=1)
    warmup_steps: int = Field(200, ge=0)
    band_weight: float = Field(4.0, ge=0)  # extra loss weight on edges in the 5-45 % band
    jitter: PoseJitter = Field(default_factory=PoseJitter)
    blur: CropBlur = Field(default_factory=CropBlur)
    # exposure normalisation of every crop (spraycv.io.exposure; stored in the refiner's
    # sidecar and applied the same way at inference); None: the `init_weights` model's own
    exposure: Exposure | None = None
    # crops without a plume (spraycv.refine.negatives): this share of every batch, half of
    # them at the false readings that `mine_weights` makes on the training set (mined once,
    # kept in the run folder), half at random poses on frames where nothing sprays
    negative_frac: float = Field(0.0, ge=0, lt=1)
    mine_weights: Path | None = Path("weights/default.safetensors")
    # an exponential moving average of the weights is validated and saved (None: the
    # weights as trained); 0.998 averages about the last 500 steps
    ema_decay: float | None = Field(None, gt=0, lt=1)
    max_train_images: int | None = Field(None, ge=1)
    val_crops: int = Field(300, ge=10)
    checkpoint_every_s: float = Field(300.0, gt=0)
    max_minutes: float | None = Field(None, gt=0)
    threads: int | None = Field(1, ge=1)
    # the training steps' forward passes (spraycv.training.precision; validation stays fp32):
    # auto takes bf16 where the CPU computes it natively (experiments row 224)
    precision: Precision = "auto"
    seed: int = 0
    out_dir: Path = Path("runs")
    # the apex channel (model.apex_head: true): the crop's true apex, learnt as a spatial
    # softmax against a Gaussian of `apex_sigma_px` crop px around it, its cross-entropy
    # weighed by `apex_weight` beside the mask loss (0: no apex loss)
    apex_weight: float = Field(0.0, ge=0)
    apex_sigma_px: float = Field(2.0, gt=0)
    # train the apex channel alone: the segmentation's weights and BatchNorm statistics stay
    # those of `init_weights`, so its masks (and every reading from the edges) do not move
    apex_only: bool = False
    # train all but the segmentation's encoder (weights and BatchNorm statistics): a new look
    # learnt by the decoder, with less drift of the looks the encoder already reads well
    freeze_encoder: bool = False
    # every BatchNorm layer in eval mode: the starting refiner's statistics, batch statistics
    # kept out of training (the weights still train), as the network's fine-tunes that held
    # their teacher had them (`TrainConfig.freeze_batchnorm`; experiments rows 197 and 200)
    freeze_batchnorm: bool = False
    # a frozen refiner (a checkpoint) whose crop probabilities, and apex channel where both
    # have one, the run also learns, weighed by `distill_weight` beside the truth's loss:
    # knowledge distillation into a smaller network (experiments row 161); None: none
    teacher_weights: Path | None = None
    distill_weight: float = Field(0.0, ge=0)
    # frames of these render styles (their labels' `style`) learn the truth alone: a look
    # the teacher reads wrongly is not pulled towards it (experiments row 195); every other
    # crop, those without a plume too, keeps the teacher beside the truth
    untaught_styles: list[str] = Field(default_factory=list)
    # the crop loss's soft Dice in the distillation too (row 161); false: its weighted BCE
    # alone, least where the student's probabilities equal the teacher's, so that a teacher
    # holds what it reads (row 195: with the Dice, a run drifted from its teacher)
    distill_dice: bool = True

    @model_validator(mode="after")
    def _teacher(self) -> RefinerTrainConfig:
        if (self.distill_weight > 0) != (self.teacher_weights is not None):
            raise ValueError("distillation needs both teacher_weights and distill_weight > 0")
        if self.untaught_styles and self.teacher_weights is None:
            raise ValueError("untaught_styles needs a teacher (teacher_weights)")
        return self

    @model_validator(mode="after")
    def _apex_channel(self) -> RefinerTrainConfig:
        if self.apex_weight > 0 and not self.model.apex_head:
            raise ValueError("apex_weight needs an apex channel: set model.apex_head: true")
        if self.apex_only and not self.apex_weight > 0:
            raise ValueError("apex_only trains the apex channel alone: set apex_weight > 0")
        return self
