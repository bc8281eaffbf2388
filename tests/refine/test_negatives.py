"""Crops without a plume for the refiner: mined false readings, random poses on frames where
nothing sprays, and training batches that hold both kinds."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from spraycv.config.refine import RefinerTrainConfig
from spraycv.data.synth import write_dataset
from spraycv.geometry.analytic import WedgeSpec, draw_wedge, true_length
from spraycv.measure import Measurer
from spraycv.refine.data import CropSource
from spraycv.refine.negatives import (
    AXIS_SPREAD_DEG,
    NegativePose,
    load_negatives,
    mine_negatives,
    random_negative,
    save_negatives,
    spray_share,
)
from spraycv.refine.train import Negatives, RunFiles, make_batch
from spraycv.refine.validation import NegativeValidation
from spraycv.runtime.processing import ModelIO
from spraycv.segment.classical import segment_classical

PLUME = WedgeSpec((300.0, 60.0), 0.0, 15.0, 15.0, 300.0)
BRACKET = WedgeSpec((110.0, 80.0), 0.0, 20.0, 20.0, 180.0)  # a lit part shaped like a plume


def frame_with_a_bracket() -> tuple[np.ndarray, np.ndarray, dict]:
    """(image, instances, record): one true plume (instance 1) and a bright bracket."""
    plume = draw_wedge((512, 512), PLUME)
    bright = plume | draw_wedge((512, 512), BRACKET)
    image = np.repeat(bright[..., None] * 220 + 20, 3, axis=2).astype(np.uint8)
    length = true_length((512, 512), PLUME)
    nozzle = {"index": 0, "visible": True, "state": "on", "apex": list(PLUME.apex),
              "length_px": length, "included_angle_deg": PLUME.included_deg}  # fmt: skip
    return image, plume.astype(np.uint8), {"nozzles": [nozzle]}


def test_the_false_reading_is_mined_and_the_plume_is_not() -> None:
    image, instances, record = frame_with_a_bracket()
    measurer = Measurer(segment_classical)
    (found,) = mine_negatives([image], [instances], [record], measurer, size=128)
    assert np.hypot(*np.subtract(found.apex, BRACKET.apex)) < 10
    assert spray_share(instances, found.pose(), 128) == 0.0
    assert spray_share(instances, NegativePose(0, PLUME.apex, (0, 1), 300, 15).pose(), 128) > 0.2


@pytest.mark.parametrize("seed", range(5))
def test_random_poses_lie_on_the_frame_and_point_down_within_the_spread(seed: int) -> None:
    negative = random_negative(3, (480, 640), np.random.default_rng(seed))
    x, y = negative.apex
    assert (negative.frame, 0 <= x <= 639, 0 <= y <= 479) == (3, True, True)
    assert math.degrees(math.acos(negative.axis[1])) <= AXIS_SPREAD_DEG + 1e-9
    assert negative.pose().length == negative.length


def test_mined_poses_are_kept_and_read_back(tmp_path: Path) -> None:
    poses = [NegativePose(2, (10.5, 20.0), (0.0, 1.0), 100.0, 25.0)]
    save_negatives(tmp_path / "negatives.jsonl", poses)
    assert load_negatives(tmp_path / "negatives.jsonl") == poses


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("frames") / "d", 12, size=256, seed=5,
                         workers=1, progress=False)  # fmt: skip


@pytest.mark.parametrize(("share", "empty"), [(0.0, 0), (0.999, 8)])
def test_a_batch_holds_the_share_of_empty_targets_asked_for(
    rendered: Path, tmp_path: Path, share: float, empty: int
) -> None:
    source = CropSource(rendered)
    source.empty_frames = [1, 2]  # stand-ins: the rendered frames all spray
    cfg = RefinerTrainConfig(train_data=rendered, negative_frac=share, batch_size=8,
                             mine_weights=None, out_dir=tmp_path, crop_size=64)  # fmt: skip
    negatives = Negatives(source, cfg, RunFiles(cfg))
    io = ModelIO((64, 64), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), 0.5)
    images, truths, apexes, _ = make_batch(source, cfg, io, np.random.default_rng(0), negatives)
    assert images.shape == (8, 3, 64, 64)
    assert int((truths.flatten(1).amax(1) == 0).sum()) == empty
    # a crop without a plume has no apex to learn; every other one has one
    assert int(apexes[:, 0].isnan().sum()) == empty and apexes.shape == (8, 2)


class ConstantLogit(torch.nn.Module):
    """A refiner that draws the same logit everywhere."""

    def __init__(self, logit: float):
        super().__init__()
        self.logit = logit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.full((x.shape[0], 1, *x.shape[-2:]), self.logit)


@pytest.mark.parametrize(("logit", "drawn"), [(8.0, 1.0), (-8.0, 0.0)])
def test_held_out_negatives_measure_the_plume_a_refiner_draws(logit: float, drawn: float):
    poses = [NegativePose(0, (64.0, 10.0), (0.0, 1.0), 100.0, 20.0 + k) for k in range(40)]
    check = NegativeValidation.__new__(NegativeValidation)  # the crops without a frame source
    check.items = poses
    check.crops = [np.full((64, 64, 3), 90, np.uint8)] * len(poses)  # two batches of 32
    model = ConstantLogit(logit).train()
    io = ModelIO((64, 64), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    found = check.supports(model, io)
    assert found["neg_drawn"] == drawn
    assert found["neg_support"] == pytest.approx(drawn, abs=1e-3)
    assert model.training  # validation leaves the run's model training
