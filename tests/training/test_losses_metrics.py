from __future__ import annotations

import numpy as np
import pytest
import torch

from spraycv.training.losses import DiceBCELoss
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
