from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from spraycv.runtime.predictor import TorchPredictor, load_predictor
from spraycv.runtime.processing import ModelIO, postprocess, preprocess
from spraycv.training.checkpoint import CheckpointError

IO = ModelIO((64, 64), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory, tiny_checkpoint) -> Path:
    return tiny_checkpoint(tmp_path_factory.mktemp("w"), io=IO)[0]


def test_torch_predictor_matches_the_model_and_returns_full_size_masks(weights: Path):
    predictor = load_predictor(weights)
    assert isinstance(predictor, TorchPredictor) and predictor.io == IO
    images = [np.random.default_rng(i).integers(0, 255, (90, 120, 3), np.uint8) for i in range(2)]
    masks = predictor.predict(images)
    assert [m.shape for m in masks] == [(90, 120)] * 2
    with torch.no_grad():
        logits = predictor.model(torch.from_numpy(preprocess(images, IO))).numpy()
    for mask, expected in zip(masks, postprocess(logits, [(90, 120)] * 2, IO), strict=True):
        np.testing.assert_array_equal(mask, expected)
    np.testing.assert_array_equal(predictor(images[0]), masks[0])
    assert predictor.predict([]) == []


def test_keep_aspect_runs_each_shape_at_its_own_input_size(tmp_path: Path, tiny_checkpoint):
    """Frames of two shapes in one call: one network batch per input size, each mask the
    size of its own frame and equal to that frame's own prediction."""
    keep = ModelIO(IO.input_size, IO.mean, IO.std, resize="keep_aspect")
    predictor = load_predictor(tiny_checkpoint(tmp_path, io=keep)[0])
    assert predictor.io == keep
    shapes = [(72, 128, 3), (90, 90, 3), (72, 128, 3)]
    images = [np.random.default_rng(i).integers(0, 255, s, np.uint8) for i, s in enumerate(shapes)]
    seen: list[tuple[int, ...]] = []
    infer = predictor.infer
    predictor.infer = lambda batch: seen.append(batch.shape) or infer(batch)  # records only
    masks = predictor.predict(images)
    assert seen == [(2, 3, 64, 128), (1, 3, 64, 64)]
    assert [m.shape for m in masks] == [s[:2] for s in shapes]
    for image, mask in zip(images, masks, strict=True):
        np.testing.assert_array_equal(predictor(image), mask)


@pytest.mark.parametrize(
    ("name", "content", "error", "message"),
    [
        ("m.pt", b"x", ValueError, "valid: .safetensors"),
        ("missing.safetensors", None, CheckpointError, "not found"),
        ("cut.safetensors", b"\x00" * 10, CheckpointError, "sidecar"),
    ],
)
def test_bad_weight_files(tmp_path: Path, name: str, content, error, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(error, match=message):
        load_predictor(path)
