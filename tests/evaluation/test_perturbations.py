"""benchmarks/perturbations.py: each camera change keeps the frame's shape and 8 bits,
changes what it says it changes, and the summary reads the perturbed frames against the
rendered truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from repo_scripts import load_script

from spraycv.data.synth.writer import write_dataset
from spraycv.evaluation.heldout import rendered_frames
from spraycv.measure import Measurer
from spraycv.segment.classical import segment_classical

perturbations = load_script("perturbations", "benchmarks")


def _frame() -> np.ndarray:
    """(64, 96, 3) uint8: a bright wedge-ish gradient on a mid-grey ramp."""
    ramp = np.linspace(40, 220, 96, dtype=np.float32)[None, :, None]
    image = np.repeat(np.repeat(ramp, 64, axis=0), 3, axis=2)
    image[20:44, 30:60] = 250.0
    return image.astype(np.uint8)


@pytest.mark.parametrize("name", list(perturbations.PERTURBATIONS))
def test_every_perturbation_keeps_shape_and_bits_and_repeats(name):
    image = _frame()
    out = perturbations.PERTURBATIONS[name](image)
    assert out.shape == image.shape and out.dtype == np.uint8
    np.testing.assert_array_equal(out, perturbations.PERTURBATIONS[name](image))
    assert (out == image).all() == (name == "none")


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("gain1.8", lambda before, after: (after == 255).mean() > (before == 255).mean()),
        ("gain0.4", lambda before, after: after.max() < 0.5 * before.max()),
        ("gamma2", lambda before, after: after.mean() < before.mean()),
        ("gamma0.5", lambda before, after: after.mean() > before.mean()),
        ("contrast0.5", lambda before, after: after.std() < 0.6 * before.std()),
        (
            "blur3",
            lambda before, after: (
                np.abs(np.diff(after.astype(float), axis=1)).max()
                < np.abs(np.diff(before.astype(float), axis=1)).max()
            ),
        ),
        (
            "vignette0.6",
            lambda before, after: (
                after[0, 0, 0] < before[0, 0, 0] and after[32, 48, 0] == before[32, 48, 0]
            ),
        ),
    ],
)
def test_each_perturbation_does_what_its_name_says(name, check):
    image = _frame()
    assert check(image, perturbations.PERTURBATIONS[name](image))


def test_the_summary_reads_perturbed_frames_against_the_truth(tmp_path: Path):
    data = write_dataset(tmp_path / "ds", 3, size=128, seed=7, workers=1, progress=False)
    frames = rendered_frames(data)
    measurer = Measurer(segment_classical)
    plain = perturbations.perturbed_summary(frames, perturbations.PERTURBATIONS["none"], measurer)
    dark = perturbations.perturbed_summary(frames, perturbations.gain(0.02), measurer)
    assert plain["frames"] == dark["frames"] == 3
    assert plain["iou"] > 0.3 and dark["iou"] < plain["iou"]  # a black frame finds nothing
