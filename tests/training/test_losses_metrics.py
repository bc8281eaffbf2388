from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from spraycv.config.train import TrainConfig
from spraycv.training.losses import DiceBCELoss, boundary_band, excess_bce, lovasz_hinge
from spraycv.training.metrics import MaskMetrics, boundary_f1, iou_dice


def _square(size: int, lo: int, hi: int) -> np.ndarray:
    m = np.zeros((size, size), bool)
    m[lo:hi, lo:hi] = True
    return m


@pytest.mark.parametrize(
    ("pred", "target", "iou", "dice"),
    [
        (_square(10, 0, 10), _square(10, 0, 10), 1.0, 1.0),
        (np.zeros((4, 4), bool), np.zeros((4, 4), bool), 1.0, 1.0),
        (_square(10, 0, 5), np.zeros((10, 10), bool), 0.0, 0.0),
        (_square(10, 0, 4), _square(10, 0, 2), 4 / 16, 2 * 4 / 20),
    ],
)
def test_iou_dice(pred, target, iou, dice):
    assert iou_dice(pred, target) == pytest.approx((iou, dice))


def test_boundary_f1_tolerates_a_one_pixel_shift_but_not_a_large_one():
    target = _square(64, 10, 40)
    assert boundary_f1(target, target) == 1.0
    assert boundary_f1(_square(64, 11, 41), target, tolerance_px=1.5) == pytest.approx(1.0)
    assert boundary_f1(_square(64, 20, 50), target, tolerance_px=1.5) < 0.5
    assert boundary_f1(np.zeros((64, 64), bool), target) == 0.0


def test_mask_metrics_means_of_sums():
    m = MaskMetrics()
    m.update(_square(10, 0, 10), _square(10, 0, 10))
    m.update(_square(10, 0, 5), np.zeros((10, 10), bool))
    means = MaskMetrics.means(m.as_array())
    assert means["iou"] == pytest.approx(0.5)
    assert m.count == 2


def test_loss_is_small_for_confident_right_logits_and_float32_under_bf16():
    target = torch.zeros(2, 1, 8, 8)
    target[:, :, 2:6, 2:6] = 1
    loss_fn = DiceBCELoss()
    good = loss_fn((target * 2 - 1) * 20, target)
    bad = loss_fn(-(target * 2 - 1) * 20, target)
    assert good < 0.01 < 1.0 < bad
    half = loss_fn(((target * 2 - 1) * 3).bfloat16(), target)
    assert half.dtype == torch.float32


def test_boundary_band_marks_the_pixels_near_the_boundary_only():
    target = torch.zeros(1, 1, 16, 16)
    target[:, :, 4:12, 4:12] = 1
    band = boundary_band(target, 2)
    assert band[0, 0, 8, 8] == 0 and band[0, 0, 0, 15] == 0  # deep inside, far outside
    assert band[0, 0, 4, 8] == 1 and band[0, 0, 2, 8] == 1 and band[0, 0, 5, 8] == 1
    assert band[0, 0, 1, 8] == 0


@pytest.mark.parametrize(("weight", "boundary_share_rises"), [(0.0, False), (4.0, True)])
def test_boundary_weight_moves_the_bce_towards_boundary_errors(weight, boundary_share_rises):
    target = torch.zeros(1, 1, 32, 32)
    target[:, :, 8:24, 8:24] = 1
    right = (target * 2 - 1) * 10
    at_edge, inside = right.clone(), right.clone()
    at_edge[:, :, 8, 8:24] = -10  # one wrong row on the boundary
    inside[:, :, 16, 8:24] = -10  # as many wrong pixels deep inside
    plain = DiceBCELoss(dice_weight=0.0)
    weighted = DiceBCELoss(dice_weight=0.0, boundary_weight=weight, boundary_px=2)
    assert plain(at_edge, target) == pytest.approx(float(plain(inside, target)))
    ratio = float(weighted(at_edge, target) / weighted(inside, target))
    assert (ratio > 2.0) is boundary_share_rises
    assert ratio == pytest.approx(1.0) or boundary_share_rises


def test_the_training_config_builds_its_loss():
    loss = {"boundary_weight": 4.0, "boundary_px": 2, "hard_pixel_frac": 0.1}
    loss_fn = DiceBCELoss.from_config(TrainConfig.model_validate({"loss": loss}).loss)
    assert (loss_fn.boundary_weight, loss_fn.boundary_px, loss_fn.hard_pixel_frac) == (4, 2, 0.1)
    for bad in ({"boundary_px": 0}, {"hard_pixel_frac": 0.0}, {"boundary_weight": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            TrainConfig.model_validate({"loss": bad})


def test_excess_bce_is_zero_where_the_probability_meets_a_soft_target():
    target = torch.tensor([0.0, 0.3, 0.5, 1.0])
    logits = torch.logit(target.clamp(1e-6, 1 - 1e-6))
    per_pixel = torch.nn.functional.binary_cross_entropy_with_logits(
        logits, target, reduction="none"
    )
    assert torch.allclose(excess_bce(per_pixel, target), torch.zeros(4), atol=1e-4)


@pytest.mark.parametrize(("frac", "expected"), [(1.0, 2 / 1024), (2 / 1024, 1.0)])
def test_hard_pixel_mining_averages_the_wrong_pixels_only(frac, expected):
    target = torch.zeros(1, 1, 32, 32)
    target[:, :, 8:24, 8:24] = 1
    logits = (target * 2 - 1) * 30  # right and confident everywhere ...
    logits[0, 0, 0, 0] = logits[0, 0, 16, 16] = 0.0  # ... but at two pixels: BCE log 2
    loss = DiceBCELoss(dice_weight=0.0, hard_pixel_frac=frac)(logits, target)
    assert float(loss) == pytest.approx(expected * math.log(2), rel=1e-3)


@pytest.mark.parametrize(
    ("pred", "target", "iou"),
    [
        (_square(10, 0, 10), _square(10, 0, 10), 1.0),
        (np.zeros((10, 10), bool), np.zeros((10, 10), bool), 1.0),
        (_square(10, 0, 5), np.zeros((10, 10), bool), 0.0),
        (_square(10, 0, 4), _square(10, 0, 2), 4 / 16),
        (_square(10, 2, 6), _square(10, 4, 8), 4 / 28),
    ],
)
def test_lovasz_hinge_of_unit_logits_is_twice_one_minus_the_iou(pred, target, iou):
    # logits of +-1: each wrong pixel's hinge error is 2, each right one's 0, so the
    # hinge sums the Jaccard loss's increments up to the wrong pixels: 2 x (1 - IoU)
    logits = torch.from_numpy(np.where(pred, 1.0, -1.0)).float()[None, None]
    truth = torch.from_numpy(target).float()[None, None]
    assert float(lovasz_hinge(logits, truth)) == pytest.approx(2 * (1 - iou))


def test_lovasz_weight_adds_the_hinge_to_the_loss():
    target = torch.zeros(2, 1, 8, 8)
    target[:, :, 2:6, 2:6] = 1
    logits = (target * 2 - 1) * 0.5
    plain, with_hinge = DiceBCELoss(), DiceBCELoss(lovasz_weight=2.0)
    extra = float(with_hinge(logits, target)) - float(plain(logits, target))
    assert extra == pytest.approx(2.0 * float(lovasz_hinge(logits, target)))
    assert extra > 0
