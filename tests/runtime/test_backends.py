from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spraycv.export.onnx_export import export_onnx
from spraycv.runtime.onnx_backend import OnnxPredictor
from spraycv.runtime.predictor import (
    ModelLoadError,
    TorchPredictor,
    backend_for,
    load_predictor,
)
from spraycv.runtime.processing import ModelIO
from spraycv.runtime.tensorrt_backend import engine_sidecar_path

IO = ModelIO((64, 64), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, tiny_checkpoint) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("b")
    weights, model, side = tiny_checkpoint(root, "Unet", "mobilenet_v2", IO)
    return weights, export_onnx(model, side, root / "m.onnx").path


@pytest.mark.parametrize(
    ("name", "backend"),
    [
        ("a.safetensors", "pytorch"),
        ("b.onnx", "onnxruntime"),
        ("c.int8.onnx", "onnxruntime"),
        ("d.fp16.ENGINE", "tensorrt"),
    ],
)
def test_suffix_dispatch(name: str, backend: str):
    assert backend_for(name).name == backend


def test_unknown_suffix_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"valid: \.safetensors, \.onnx, \.engine"):
        load_predictor("model.pt")


def test_importing_the_runtime_needs_neither_onnxruntime_nor_tensorrt_nor_export():
    code = (
        "import sys, spraycv.runtime.predictor, spraycv.runtime.tensorrt_backend;"
        "print('onnxruntime' in sys.modules, 'tensorrt' in sys.modules,"
        " 'spraycv.export' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


def test_onnx_predictor_matches_torch_masks(files):
    weights, onnx_path = files
    torch_pred, onnx_pred = load_predictor(weights), load_predictor(onnx_path)
    assert isinstance(torch_pred, TorchPredictor) and isinstance(onnx_pred, OnnxPredictor)
    assert onnx_pred.io == torch_pred.io == IO
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 255, (90, 120, 3), np.uint8) for _ in range(3)]
    for a, b in zip(torch_pred.predict(images), onnx_pred.predict(images), strict=True):
        assert a.shape == (90, 120) and (a != b).mean() < 1e-3


@pytest.mark.parametrize(("spin", "entry"), [(False, "0"), (True, "1")])
def test_idle_threads_spin_only_when_asked(files, spin: bool, entry: str):
    # the model's and the refiner's sessions share the cores: spinning ones slow the other
    predictor = OnnxPredictor(files[1], spin=spin)
    options = predictor.session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == entry
    image = np.random.default_rng(1).integers(0, 255, (64, 64, 3), np.uint8)
    assert predictor.predict([image])[0].shape == (64, 64)


def test_cuda_request_on_a_cpu_only_runtime_warns(files):
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("a CUDA provider is available here")
    with pytest.warns(RuntimeWarning, match="not the GPU"):
        OnnxPredictor(files[1], device="cuda")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupt_onnx_files_name_the_file(files, tmp_path: Path, damage: str):
    data = files[1].read_bytes()
    content = {
        "garbage": b"not an onnx model" * 10,
        "truncated": data[: len(data) // 2],
        "empty": b"",
    }[damage]
    path = tmp_path / f"{damage}.onnx"
    path.write_bytes(content)
    with pytest.raises(ModelLoadError, match=rf"{damage}\.onnx: corrupt, truncated"):
        load_predictor(path)


def test_onnx_without_spraycv_metadata_is_refused(files, tmp_path: Path):
    import onnx

    proto = onnx.load(str(files[1]))
    del proto.metadata_props[:]
    onnx.save(proto, str(tmp_path / "bare.onnx"))
    with pytest.raises(ModelLoadError, match=r"bare\.onnx: no 'spraycv' metadata"):
        load_predictor(tmp_path / "bare.onnx")


def test_missing_model_files(tmp_path: Path):
    with pytest.raises(ModelLoadError, match="ONNX file not found"):
        load_predictor(tmp_path / "nope.onnx")
    with pytest.raises(ModelLoadError, match="engine file not found"):
        load_predictor(tmp_path / "nope.engine")


def test_corrupt_engine_names_the_file(tmp_path: Path):
    engine = tmp_path / "cut.engine"
    engine.write_bytes(b"\x00" * 64)
    with pytest.raises(ModelLoadError, match=r"cut\.engine: sidecar cut\.engine\.json not found"):
        load_predictor(engine)
    engine_sidecar_path(engine).write_text('{"format": "spraycv-engine/1"}')
    # without TensorRT (or a GPU) that is the error; with them, the engine fails to load
    with pytest.raises(ModelLoadError, match=r"cut\.engine: "):
        load_predictor(engine, "cuda")
