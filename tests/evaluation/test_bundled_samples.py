"""The shipped model, end to end, on the bundled samples a new user runs first."""

from __future__ import annotations

import pytest

from spraycv.evaluation.heldout import evaluate_dataset
from spraycv.paths import SAMPLES_DIR, default_weights
from spraycv.runtime.predictor import load_predictor


@pytest.fixture(scope="module")
def report(one_torch_thread: None):
    return evaluate_dataset(load_predictor(default_weights()), SAMPLES_DIR, progress=False)


def test_every_nozzle_of_every_sample_is_found_once(report):
    assert len(report.frames) == 6
    for frame in report.frames:
        assert (frame.missed, frame.extra) == (0, 0), frame.id


def test_sample_angles_are_within_the_shipped_models_error(report):
    # the shipped model's held-out p95 is about 10 deg (weights/MODEL_CARD.md)
    errors = report.angle_errors()
    assert errors.size == 13 and errors.max() < 10.0
