"""The shipped ONNX export (weights/default.onnx, with the refiner's beside it) is what
measures by default: it must read every frame as the shipped checkpoint does, through the
whole pipeline (network, apex head, second look, refiner, geometry), so that a checkpoint
shipped without a fresh export, or metadata the export dropped, fails here."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from spraycv.data.synth import render_sample
from spraycv.formats import refiner_companion
from spraycv.io.images import read_image
from spraycv.measure import Measurer, load_measurer
from spraycv.paths import SAMPLES_DIR, SHIPPED_CHECKPOINT, SHIPPED_MODEL, default_weights

ANGLE_TOLERANCE_DEG = 0.05  # FP32 graphs differ from PyTorch by ~3e-5 in the logits


def _small_sprays(seed: int) -> np.ndarray:
    """A rendered frame shrunk to a quarter inside a frame of its median colour: sprays
    small enough for the second look (spraycv.runtime.zoom)."""
    image = render_sample(seed, 384).image
    small = cv2.resize(image, (96, 96), interpolation=cv2.INTER_AREA)
    fill = [int(v) for v in np.median(image.reshape(-1, 3), axis=0)]
    return cv2.copyMakeBorder(small, 144, 144, 144, 144, cv2.BORDER_CONSTANT, value=fill)


SAMPLES = sorted((SAMPLES_DIR / "images").glob("*.jpg"))
FRAMES = {  # name -> how to make the frame
    **{p.name: (lambda p=p: read_image(p)) for p in SAMPLES},
    "rendered 16:9": lambda: render_sample(7001, 455, height=256).image,
    "rendered portrait": lambda: render_sample(7002, 256, height=384).image,
    "small sprays": lambda: _small_sprays(7003),
    "black": lambda: np.zeros((240, 320, 3), np.uint8),
}


@pytest.fixture(scope="module")
def pipelines() -> tuple[Measurer, Measurer]:
    return load_measurer(SHIPPED_CHECKPOINT, threads=1), load_measurer(SHIPPED_MODEL, threads=1)


def test_the_export_measures_by_default(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("SPRAYCV_WEIGHTS", raising=False)
    assert default_weights() == SHIPPED_MODEL
    assert refiner_companion(SHIPPED_MODEL).is_file()
    assert refiner_companion(SHIPPED_CHECKPOINT).is_file()


@pytest.mark.parametrize("name", list(FRAMES))
def test_the_export_reads_each_frame_as_the_checkpoint(
    name: str, pipelines: tuple[Measurer, Measurer]
):
    image = FRAMES[name]()
    checkpoint, export = (pipeline(image) for pipeline in pipelines)
    assert "refiner" in pipelines[1].name and "onnxruntime" in pipelines[1].name
    assert len(export.measurements) == len(checkpoint.measurements), name
    for ours, theirs in zip(export.measurements, checkpoint.measurements, strict=True):
        assert ours.included_angle_deg == pytest.approx(
            theirs.included_angle_deg, abs=ANGLE_TOLERANCE_DEG, nan_ok=True
        ), name
        assert ours.flags == theirs.flags, name
        assert ours.confidence == pytest.approx(theirs.confidence, abs=0.01, nan_ok=True)
