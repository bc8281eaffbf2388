"""The one model-format table (spraycv.formats) and what export and runtime read from it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spraycv.export import FLAG_DEFAULTS, FORMATS
from spraycv.formats import (
    CHECKPOINT,
    FORMAT_FLAGS,
    MODEL_FORMATS,
    Flag,
    ModelFormat,
    _flags_by_name,
)
from spraycv.runtime.predictor import BACKENDS, Predictor


@pytest.mark.parametrize("fmt", MODEL_FORMATS, ids=lambda f: f.name)
def test_every_row_names_a_predictor_and_an_exporter_that_exist(fmt: ModelFormat):
    assert issubclass(fmt.load_backend(), Predictor)
    if fmt.exporter is not None:
        assert callable(fmt.load_exporter())


def test_export_formats_are_the_rows_with_an_exporter():
    assert list(FORMATS) == ["onnx", "onnx-int8", "tensorrt"]
    with pytest.raises(ValueError, match="not written by an exporter"):
        CHECKPOINT.load_exporter()


def test_backends_and_flag_defaults_are_read_from_the_table():
    assert [(b.name, b.suffixes) for b in BACKENDS] == [
        ("pytorch", (".safetensors",)),
        ("onnxruntime", (".onnx",)),
        ("tensorrt", (".engine",)),
    ]
    assert FLAG_DEFAULTS == {
        "calib_images": 32,
        "fixed_size": False,
        "half": False,
        "int8": False,
        "max_batch": 16,
        "opt_batch": 1,
        "per_tensor": False,
        "workspace_gb": 4.0,
    }


def test_one_name_means_one_flag():
    rows = (
        ModelFormat("a", ".a", "m:A", "m:a", (Flag("n", 1, "x"),), "cpu", "m", None, "", ""),
        ModelFormat("b", ".b", "m:B", "m:b", (Flag("n", 2, "x"),), "cpu", "m", None, "", ""),
    )
    with pytest.raises(ValueError, match="two different export flags are named 'n'"):
        _flags_by_name(rows)
    assert set(FORMAT_FLAGS) == {flag.name for fmt in MODEL_FORMATS for flag in fmt.flags}


def test_the_table_imports_only_the_standard_library():
    code = (
        "import sys, spraycv.formats;"
        "print(sorted(m for m in sys.modules if m.startswith('spraycv')),"
        " 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['spraycv', 'spraycv.formats'] False"
