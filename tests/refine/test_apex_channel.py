"""The refiner's apex channel: the true apex of each training crop, its loss, its sub-pixel
reading, and the side lines pinned to it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from spraycv.config.refine import RefinerTrainConfig
from spraycv.refine.apex import channel_apex, read_apex
from spraycv.refine.data import CropSource
from spraycv.refine.edges import APEX_SOURCES, near_apex, side_lines
from spraycv.refine.losses import apex_loss
from spraycv.refine.pose import crop_pose, warp_crop
from spraycv.refine.stage import Refiner
from spraycv.refine.train import make_batch, train_refiner
from spraycv.runtime.predictor import load_predictor
from spraycv.runtime.processing import ModelIO, preprocess
from spraycv.training.checkpoint import load_checkpoint

SIZE = 64
IDENTITY = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def _bumps(*centres: tuple[float, float], sigma: float = 1.5) -> np.ndarray:
    """(SIZE, SIZE) logits: the log of a sum of Gaussians at (col, row) centres."""
    rows, cols = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    total = sum(np.exp(-((cols - c) ** 2 + (rows - r) ** 2) / (2 * sigma**2)) for c, r in centres)
    return np.log(total + 1e-12)


@pytest.mark.parametrize(
    ("centres", "expected", "sure"),
    [
        ([(20.0, 12.0)], (20.0, 12.0), True),
        ([(31.3, 7.6)], (31.3, 7.6), True),  # between pixels
        ([(0.4, 40.2)], None, True),  # at the border the window is cut, the mean is not exact
        ([(10.0, 10.0), (50.0, 50.0)], None, False),  # two apexes: neither is sure
    ],
)
def test_the_apex_is_read_between_pixels_and_only_where_it_is_sure(centres, expected, sure):
    apex, mass = read_apex(_bumps(*centres))
    if expected is not None:
        assert np.hypot(*(apex - expected)) < 0.02
    assert (mass >= 0.5) == sure
    assert (channel_apex(_bumps(*centres), IDENTITY) is not None) == sure


def test_a_flat_channel_gives_no_apex() -> None:
    assert channel_apex(np.zeros((SIZE, SIZE)), IDENTITY) is None


def test_the_apex_loss_is_least_on_the_true_apex_and_skips_crops_without_one() -> None:
    truth = torch.tensor([[20.3, 11.7], [np.nan, np.nan]])
    losses = {}
    for shift in (0.0, 0.5, 1.0, 3.0):
        logits = torch.from_numpy(_bumps((20.3 + shift, 11.7), sigma=2.0)).float()
        batch = torch.stack([logits, torch.zeros_like(logits)])
        losses[shift] = float(apex_loss(batch, truth, 2.0))
    assert losses[0.0] < losses[0.5] < losses[1.0] < losses[3.0]
    nothing = torch.full((1, 2), float("nan"))
    assert float(apex_loss(torch.zeros(1, SIZE, SIZE), nothing, 2.0)) == 0.0


def test_an_apex_loss_needs_an_apex_channel() -> None:
    with pytest.raises(ValueError, match="apex_head"):
        RefinerTrainConfig(apex_weight=0.1)
    RefinerTrainConfig(apex_weight=0.1, model={"encoder": "mobilenet_v2", "apex_head": True})


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from spraycv.data.synth import write_dataset

    return write_dataset(tmp_path_factory.mktemp("frames") / "d", 8, size=256, seed=11,
                         workers=1, progress=False)  # fmt: skip


def test_each_training_crop_carries_its_true_apex_mirrored_with_it(frames: Path) -> None:
    """Where the sides of the crop's own truth meet is where its apex target lies, in crops
    as cut and in mirrored ones alike."""
    source = CropSource(frames)
    cfg = RefinerTrainConfig(train_data=frames, crop_size=SIZE, batch_size=24, mine_weights=None)
    io = ModelIO((SIZE, SIZE), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), 0.5)
    _, truths, apexes, _ = make_batch(source, cfg, io, np.random.default_rng(4))
    misses = []
    for truth, apex in zip(truths[:, 0].numpy(), apexes.numpy(), strict=True):
        met = near_apex(truth, IDENTITY)
        if met is not None and apex[1] >= 0:  # sides reach an apex above the crop only roughly
            misses.append(float(np.hypot(*(met - apex))))
    assert len(misses) >= 12
    assert np.median(misses) < 0.5 and max(misses) < 2.0  # a mirror slip is 1-30 px


def _crop(source: CropSource) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first nozzle's truth on its crop, that crop's transform and its true apex."""
    target = source.targets[0]
    pose = crop_pose(target.apex, target.axis, target.length, max(target.half_left, 20.0))
    _, truth, transform = source.crop(target, pose, 128)
    return truth, transform, np.asarray(target.apex)


@pytest.mark.parametrize(("apex_from", "share"), [("edges", 0.0), ("channel", 1.0), ("mean", 0.5)])
def test_the_sides_are_pinned_where_the_apex_source_says(frames: Path, apex_from, share) -> None:
    truth, transform, _ = _crop(CropSource(frames))
    edges = near_apex(truth, transform)
    channel = edges + np.array([1.5, -1.0])
    left, right = side_lines(truth, transform, channel_apex=channel, apex_from=apex_from)
    pinned = edges + share * (channel - edges)
    assert np.allclose(left.point, pinned) and np.allclose(right.point, pinned)
    # without a channel reading every source falls back on the edges
    assert np.allclose(side_lines(truth, transform, apex_from=apex_from)[0].point, edges)


def test_an_unknown_apex_source_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=", ".join(sorted(APEX_SOURCES))):
        Refiner(predictor=None, apex_from="peak")


def test_a_refiner_trained_with_an_apex_channel_reads_apexes(frames: Path, tmp_path: Path):
    """A short run: the checkpoint has the channel, the log its apex figures, and a Refiner
    on it reads an apex on each crop that it is sure of (the rest stay None)."""
    model = {"arch": "Unet", "encoder": "tu-tf_mobilenetv3_small_100", "apex_head": True,
             "kwargs": {"decoder_channels": [64, 32, 16, 16, 16]}}  # fmt: skip
    cfg = RefinerTrainConfig(name="a", train_data=frames, val_data=frames, init_weights=None,
                             crop_size=SIZE, batch_size=2, steps=2, warmup_steps=0,
                             val_crops=10, checkpoint_every_s=1e9, out_dir=tmp_path,
                             model=model, apex_weight=0.1, mine_weights=None)  # fmt: skip
    files = train_refiner(cfg, log=lambda _: None)
    net, meta = load_checkpoint(files.last)
    assert meta["model"]["apex_head"] and "apex_axial" in meta["metrics"]
    assert net(torch.zeros(1, 3, SIZE, SIZE)).shape == (1, 2, SIZE, SIZE)
    refiner = Refiner(load_predictor(files.last, threads=1), apex_from="channel")
    source = CropSource(frames)
    target = source.targets[0]
    image = source.images[target.frame]
    pose = crop_pose(target.apex, target.axis, target.length, target.half_left)
    probs, transforms, apexes = refiner.crop_probabilities(image, [pose, pose])
    assert probs.shape == (2, SIZE, SIZE) and len(transforms) == len(apexes) == 2
    crop = warp_crop(image, transforms[0], refiner.size)
    logits = refiner.predictor.infer(preprocess([crop], refiner.predictor.io))[0, 1]
    expected = channel_apex(logits, transforms[0])  # the channel's own reading, or None
    for apex in apexes:
        assert (apex is None) == (expected is None)
        assert apex is None or np.allclose(apex, expected)


FROZEN_RUNS = [  # (the run's flag, the prefixes of every weight or statistic it may move)
    ({"apex_only": True}, ("apex.", "apex_fine.")),
    ({"freeze_encoder": True}, ("apex.", "apex_fine.", "net.decoder.", "net.segmentation_head.")),
]


def moved_by_a_run(frames: Path, tmp_path: Path, **flag) -> set[str]:
    """The weights and statistics that 3 steps of a run with `flag` move, from a refiner
    trained one step."""
    model = {"arch": "Unet", "encoder": "tu-tf_mobilenetv3_small_100", "apex_head": True,
             "apex_fine": True, "kwargs": {"decoder_channels": [64, 32, 16, 16, 16]}}  # fmt: skip
    base = dict(train_data=frames, val_data=frames, crop_size=SIZE, batch_size=2,
                warmup_steps=0, val_crops=10, checkpoint_every_s=1e9, out_dir=tmp_path,
                mine_weights=None, model=model, apex_weight=0.1)  # fmt: skip
    quiet = {"log": lambda _: None}
    start = train_refiner(RefinerTrainConfig(name="s", init_weights=None, steps=1, **base), **quiet)
    run = RefinerTrainConfig(name="o", init_weights=start.last, steps=3, lr=0.01, **flag, **base)
    after = train_refiner(run, **quiet)
    (first, _), (second, _) = load_checkpoint(start.last), load_checkpoint(after.last)
    before, now = first.state_dict(), second.state_dict()
    return {k for k in before if not torch.equal(before[k], now[k])}


@pytest.mark.parametrize(("flag", "movable"), FROZEN_RUNS)
def test_a_run_leaves_its_frozen_modules_as_they_were(frames: Path, tmp_path: Path, flag, movable):
    """`apex_only` / `freeze_encoder`: after training, every frozen weight and BatchNorm
    statistic is the starting refiner's, and the rest has moved."""
    moved = moved_by_a_run(frames, tmp_path, **flag)
    assert moved and all(k.startswith(movable) for k in moved)
    assert all(any(k.startswith(prefix) for k in moved) for prefix in movable)  # all trained


def test_a_run_with_frozen_batchnorm_keeps_every_statistic(frames: Path, tmp_path: Path):
    """`freeze_batchnorm`: every BatchNorm statistic is the starting refiner's after training,
    while the weights, the encoder's too, have moved."""
    moved = moved_by_a_run(frames, tmp_path, freeze_batchnorm=True)
    statistics = ("running_mean", "running_var", "num_batches_tracked")
    assert not any(k.endswith(statistics) for k in moved)
    assert any(k.startswith("net.encoder.") for k in moved)


def test_an_apex_only_run_needs_an_apex_loss():
    with pytest.raises(ValueError, match="apex_weight"):
        RefinerTrainConfig(apex_only=True, model={"encoder": "mobilenet_v2", "apex_head": True})
