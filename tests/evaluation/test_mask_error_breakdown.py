"""benchmarks/mask_error_breakdown.py: the IoU and where the wrong pixels lie, on an analytic
wedge whose prediction is the truth itself or the truth shifted sideways."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from repo_scripts import load_script

breakdown_script = load_script("mask_error_breakdown", "benchmarks")

SIZE = 128
RECORD = {"nozzles": [{"apex": [64.0, 10.0], "axis": [0.0, 1.0], "length_px": 100.0}]}


def _wedge() -> np.ndarray:
    """(128, 128) bool: a 40 deg wedge from (64, 10) pointing down, 100 px long."""
    mask = np.zeros((SIZE, SIZE), np.uint8)
    half = 100 * np.tan(np.radians(20))
    cv2.fillPoly(mask, [np.array([[64, 10], [64 - half, 110], [64 + half, 110]], np.int32)], 1)
    return mask.astype(bool)


def _logit(mask: np.ndarray, size: int = 64) -> np.ndarray:
    """A model-sized logit map whose 0.5 contour follows `mask`."""
    small = cv2.resize(mask.astype(np.float32), (size, size), interpolation=cv2.INTER_AREA)
    return (np.clip(small, 1e-3, 1 - 1e-3) - 0.5) * 20.0


@pytest.mark.parametrize(
    ("shift_px", "iou_range", "far_share_max"),
    [(0, (0.97, 1.0), 0.0), (6, (0.6, 0.9), 0.2)],
)
def test_the_iou_and_the_wrong_pixels_follow_the_prediction(shift_px, iou_range, far_share_max):
    truth = _wedge()
    predicted = np.roll(truth, shift_px, axis=1)
    counts = breakdown_script.breakdown(_logit(predicted), truth, RECORD, (64, 64))
    inter, union = counts[0.5]
    assert iou_range[0] <= inter / union <= iou_range[1]
    ceiling = counts["ceiling"][0] / counts["ceiling"][1]
    assert ceiling > 0.97  # a wedge through 64 px loses little
    wrong = counts["distance"].sum()
    assert wrong == counts["along"].sum()  # every wrong pixel is placed once in each table
    beyond_shift = counts["distance"][:, 4:].sum()  # more than 12 px from the boundary
    assert beyond_shift <= far_share_max * max(wrong, 1)


def test_position_along_is_the_share_of_the_length_from_the_apex():
    along = breakdown_script.position_along(RECORD, (SIZE, SIZE))
    assert along[10, 64] == pytest.approx(0.0)
    assert along[60, 64] == pytest.approx(0.5)
    assert along[0, 64] == 0.0  # behind the apex: clipped
    off = breakdown_script.position_along({"nozzles": []}, (4, 4))
    assert np.isinf(off).all()
