from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from spraycv.export import FORMATS, ExportError, export_model, validate_request
from spraycv.export.formats import check_dependency, format_table


def test_the_table_names_suffix_flags_and_device():
    assert {f.name: f.suffix for f in FORMATS.values()} == {
        "onnx": ".onnx",
        "onnx-int8": ".onnx",
        "tensorrt": ".engine",
    }
    assert {f.name: f.device for f in FORMATS.values()}["tensorrt"] == "gpu"
    table = format_table()
    for name in FORMATS:
        assert name in table
    assert "--half" in table


@pytest.mark.parametrize(
    ("fmt", "flags", "message"),
    [
        ("onxx", set(), "valid: onnx, onnx-int8, tensorrt"),
        ("onnx", {"half"}, "--half does not apply to format 'onnx' (they apply to: tensorrt)"),
        ("onnx", {"int8"}, "apply to: onnx-int8, tensorrt"),
        ("onnx-int8", {"half", "max_batch"}, "--half, --max-batch do not apply"),
        ("tensorrt", {"fixed_size"}, "its flags: --calib-images, --half, --int8"),
    ],
)
def test_flags_that_do_not_apply_are_rejected_up_front(fmt, flags, message):
    with pytest.raises(ExportError, match=re.escape(message)):
        validate_request(fmt, flags, check_runtime=False)


def test_valid_requests_and_output_suffix():
    assert validate_request("onnx", {"fixed_size", "opset"}, check_runtime=False).name == "onnx"
    assert validate_request("tensorrt", {"half"}, Path("m.engine"), check_runtime=False)
    with pytest.raises(ExportError, match=r"writes \.engine files"):
        validate_request("tensorrt", set(), Path("m.onnx"), check_runtime=False)


def test_default_output_names():
    w = Path("runs/x/best.safetensors")
    assert FORMATS["onnx"].default_output(w) == Path("runs/x/best.onnx")
    assert FORMATS["onnx-int8"].default_output(w) == Path("runs/x/best.int8.onnx")
    assert FORMATS["tensorrt"].default_output(w, half=True) == Path("runs/x/best.fp16.engine")


def test_a_missing_dependency_names_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real(name, *a)
    )
    with pytest.raises(ExportError, match="needs the Python module 'onnx': pip install onnx"):
        check_dependency(FORMATS["onnx"])


@pytest.mark.skipif(importlib.util.find_spec("tensorrt") is not None, reason="TensorRT present")
def test_tensorrt_without_tensorrt_is_a_clear_error():
    with pytest.raises(ExportError, match=r"pip install 'spraycv\[tensorrt\]'"):
        validate_request("tensorrt", {"half"})


def test_export_model_rejects_bad_requests_before_loading_anything(tmp_path: Path):
    weights = tmp_path / "m.safetensors"  # never read: validation comes first
    with pytest.raises(ExportError, match="unknown export options"):
        export_model(weights, "onnx", halfs=True)
    with pytest.raises(ExportError, match="--half does not apply"):
        export_model(weights, "onnx", half=True)
    with pytest.raises(ExportError, match=r"starts from a \.safetensors"):
        export_model(tmp_path / "m.onnx", "onnx")
