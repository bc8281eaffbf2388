"""TensorRT: builds and runs engines where `import tensorrt` works and a CUDA GPU exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

trt = pytest.importorskip("tensorrt", reason="TensorRT is not installed (extra 'tensorrt')")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="TensorRT needs a CUDA GPU"),
]

from spraycv.config.train import ModelConfig  # noqa: E402
from spraycv.export import export_model  # noqa: E402
from spraycv.models import create_model  # noqa: E402
from spraycv.runtime.predictor import ModelLoadError, load_predictor  # noqa: E402
from spraycv.runtime.processing import ModelIO  # noqa: E402
from spraycv.runtime.tensorrt_backend import TensorRTPredictor, engine_sidecar_path  # noqa: E402
from spraycv.training.checkpoint import save_checkpoint  # noqa: E402

IO = ModelIO((64, 64), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    cfg = ModelConfig(arch="Unet", encoder="mobilenet_v2")
    side = {"model": cfg.model_dump(mode="json"), **IO.to_sidecar()}
    return save_checkpoint(tmp_path_factory.mktemp("t") / "m.safetensors", create_model(cfg), side)


@pytest.mark.parametrize(("flags", "precision"), [({}, "fp32"), ({"half": True}, "fp16")])
def test_engine_round_trip(weights: Path, flags: dict, precision: str):
    result = export_model(weights, "tensorrt", parity_images=4, image_size=96, max_batch=4, **flags)
    side = json.loads(engine_sidecar_path(result.path).read_text())
    assert side["precision"] == precision and side["tensorrt_version"] == trt.__version__
    assert side["gpu"] == torch.cuda.get_device_name() and side["shapes"]["max"][0] == 4
    predictor = load_predictor(result.path, "cuda")
    assert isinstance(predictor, TensorRTPredictor)
    assert predictor.infer(torch.zeros(6, 3, 64, 64).numpy()).shape == (6, 1, 64, 64)  # chunked
    assert result.report is not None and result.report.ok


def test_int8_engine_with_calibration(weights: Path):
    result = export_model(
        weights,
        "tensorrt",
        int8=True,
        calib_images=8,
        parity_images=4,
        image_size=96,
        keep_failed=True,
        log=lambda _: None,
    )
    assert json.loads(engine_sidecar_path(result.path).read_text())["precision"] == "int8"


def test_engine_for_another_gpu_or_version_is_refused(weights: Path, tmp_path: Path):
    result = export_model(weights, "tensorrt", half=True, parity_images=2, image_size=96)
    side = json.loads(engine_sidecar_path(result.path).read_text())
    side["tensorrt_version"] = "0.0"
    engine_sidecar_path(result.path).write_text(json.dumps(side))
    with pytest.raises(ModelLoadError, match=r"built with TensorRT 0\.0"):
        load_predictor(result.path, "cuda")


def test_truncated_engine_names_the_file(weights: Path, tmp_path: Path):
    result = export_model(weights, "tensorrt", half=True, parity_images=2, image_size=96)
    cut = tmp_path / "cut.engine"
    cut.write_bytes(result.path.read_bytes()[:1000])
    engine_sidecar_path(cut).write_text(engine_sidecar_path(result.path).read_text())
    with pytest.raises(ModelLoadError, match=r"cut\.engine: corrupt or truncated"):
        load_predictor(cut, "cuda")
