"""benchmarks/redraw_variants.py: its redraws and score on an analytic wedge read by the
geometry (no network): the shipped redraw keeps the wedge, a wider one spills past it, and
only the components no reading claims are dropped."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from repo_scripts import load_script

from spraycv.geometry import measure_cones
from spraycv.geometry.analytic import WedgeSpec, draw_wedge

variants = load_script("redraw_variants", "benchmarks")

SHAPE = (256, 256)
WEDGE = WedgeSpec(apex=(128.0, 20.0), tilt_deg=0.0, half_left_deg=20.0, half_right_deg=20.0,
                  radius=180.0)  # fmt: skip


def frame(mask: np.ndarray, truth: np.ndarray, readings) -> object:
    return variants.Replayed(truth.astype(bool), mask.astype(np.uint8), list(readings))


def test_the_score_is_the_mean_of_each_frames_iou():
    truth = np.zeros(SHAPE, bool)
    truth[:, :128] = True
    half = truth.copy()
    half[:, 64:] = False  # IoU 0.5
    frames = [
        frame(truth, truth, []),
        frame(half, truth, []),
        frame(np.zeros(SHAPE, bool), np.zeros(SHAPE, bool), []),
    ]
    assert variants.mean_iou(frames, lambda mask, readings: mask) == pytest.approx(2.5 / 3)


@pytest.mark.parametrize(("degrees", "min_iou", "max_iou"), [(0.0, 0.97, 1.0), (3.0, 0.8, 0.93)])
def test_the_redraw_keeps_the_wedge_and_a_wider_one_spills(degrees, min_iou, max_iou):
    wedge = draw_wedge(SHAPE, WEDGE)
    readings = measure_cones(wedge)
    assert len(readings) == 1 and readings[0].reliable
    iou = variants.mean_iou([frame(wedge, wedge, readings)], variants.widened(degrees))
    assert min_iou <= iou <= max_iou


def test_only_the_components_no_reading_claims_are_dropped():
    wedge = draw_wedge(SHAPE, WEDGE)
    readings = measure_cones(wedge)
    blob = np.zeros(SHAPE, np.uint8)
    cv2.circle(blob, (30, 220), 12, 1, -1)
    kept = variants.drop_unclaimed(wedge | blob, readings).astype(bool)
    assert not kept[blob > 0].any()
    assert kept[wedge > 0].mean() > 0.97
