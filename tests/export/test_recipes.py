"""The exporters the format table names, up to the call into TensorRT (which is not run here:
test_tensorrt.py builds real engines where TensorRT and a GPU exist)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import spraycv.export.tensorrt_build as tensorrt_build
from spraycv.export.formats import FLAG_DEFAULTS
from spraycv.export.job import ExportJob
from spraycv.export.recipes import export_tensorrt_engine
from spraycv.formats import engine_precision


@pytest.mark.parametrize(
    ("half", "int8", "precision"),
    [(False, False, "fp32"), (True, False, "fp16"), (False, True, "int8"), (True, True, "int8")],
)
def test_engine_precision(half: bool, int8: bool, precision: str):
    assert engine_precision(half, int8) == precision


def test_the_tensorrt_recipe_passes_the_flags_to_the_builder(
    tmp_path: Path, tiny_checkpoint, monkeypatch: pytest.MonkeyPatch
):
    weights, model, side = tiny_checkpoint(tmp_path, "Unet", "mobilenet_v2")
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(tensorrt_build, "build_engine", lambda *args: calls.append(args))
    flags = {**FLAG_DEFAULTS, "half": True, "opt_batch": 2, "max_batch": 8, "workspace_gb": 1.5}
    out = tmp_path / "m.fp16.engine"
    job = ExportJob(weights, out, model, side, 32, flags, [], 64, 17, print)
    assert export_tensorrt_engine(job) == (out, "fp16")
    [(onnx_path, engine, meta, precision, calibration, profile, workspace)] = calls
    assert onnx_path.suffix == ".onnx" and engine == out and meta is side
    assert (precision, calibration, workspace) == ("fp16", None, 1.5)
    assert (profile.min_batch, profile.opt_batch, profile.max_batch) == (1, 2, 8)
    assert job.notes[-1].startswith("TensorRT fp16, batch profile")
