from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch

from spraycv.config.train import ModelConfig
from spraycv.export.onnx_export import METADATA_KEY, export_onnx
from spraycv.models import ARCHITECTURES, create_model
from spraycv.runtime.onnx_backend import OnnxPredictor
from spraycv.runtime.processing import ModelIO

IO = ModelIO((64, 64), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225), threshold=0.4)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _model(arch: str, encoder: str) -> tuple[torch.nn.Module, dict]:
    torch.manual_seed(0)
    cfg = ModelConfig(arch=arch, encoder=encoder)
    meta = {"model": cfg.model_dump(mode="json"), **IO.to_sidecar()}
    return create_model(cfg).eval(), meta


def _max_diff(model: torch.nn.Module, predictor: OnnxPredictor, batch: int, hw=(64, 64)) -> float:
    x = torch.randn(batch, 3, *hw, generator=torch.Generator().manual_seed(batch))
    with torch.inference_mode():
        ref = model(x).numpy()
    got = predictor.infer(x.numpy())
    assert got.shape == ref.shape == (batch, 1, *hw)
    return float(np.abs(got - ref).max())


@pytest.mark.parametrize("arch", list(ARCHITECTURES))
def test_round_trip_of_every_architecture(arch: str, tmp_path: Path):
    model, meta = _model(arch, ARCHITECTURES[arch].default_encoder)
    multiple = ARCHITECTURES[arch].size_multiple
    result = export_onnx(model, meta, tmp_path / "m.onnx", size_multiple=multiple)
    proto = onnx.load(str(result.path))
    assert proto.opset_import[0].version >= 17
    props = {p.key: p.value for p in proto.metadata_props}
    body = json.loads(props[METADATA_KEY])
    assert body["model"]["arch"] == arch and body["input_size"] == [64, 64]
    assert props["threshold"] == "0.4" and body["dynamic_hw"] == result.dynamic_hw
    predictor = OnnxPredictor(result.path)
    assert predictor.io == IO
    for batch in (1, 3):  # dynamic batch
        assert _max_diff(model, predictor, batch) <= 1e-4
    # dynamic height/width where the graph allows it (export_onnx checked it against PyTorch)
    assert result.valid_sizes in (f"H and W multiples of {multiple}", "exactly 64x64")


def test_fixed_size_export_of_a_same_padding_encoder(tmp_path: Path):
    """timm's runtime 'SAME' padding is frozen to constants: no shape arithmetic left."""
    model, meta = _model("Unet", "tu-tf_mobilenetv3_small_100")
    result = export_onnx(model, meta, tmp_path / "m.onnx", dynamic_hw=False)
    assert not result.dynamic_hw and result.valid_sizes == "exactly 64x64"
    ops = {n.op_type for n in onnx.load(str(result.path)).graph.node}
    assert "Ceil" not in ops
    assert _max_diff(model, OnnxPredictor(result.path), 2) <= 1e-4


def test_a_same_padding_encoder_exports_dynamic_and_keeps_the_aspect(tmp_path: Path):
    """Frozen 'SAME' pads are the same at every multiple of 32, so the graph runs a wide
    frame at its own shape; a fixed graph can only stretch, and its metadata says so."""
    model, meta = _model("Unet", "tu-tf_mobilenetv3_small_100")
    meta = {**meta, "resize": "keep_aspect", "zoom_below": 0.5}
    result = export_onnx(model, meta, tmp_path / "m.onnx", size_multiple=32)
    assert result.dynamic_hw
    assert "Ceil" not in {n.op_type for n in onnx.load(str(result.path)).graph.node}
    predictor = OnnxPredictor(result.path)
    assert predictor.io.resize == "keep_aspect" and predictor.io.zoom_below == 0.5
    assert _max_diff(model, predictor, 2, hw=(64, 128)) <= 1e-4
    fixed = export_onnx(model, meta, tmp_path / "f.onnx", dynamic_hw=False)
    assert OnnxPredictor(fixed.path).io.resize == "stretch"


def test_an_old_opset_is_refused(tmp_path: Path):
    from spraycv.export import ExportError

    model, meta = _model("FPN", "resnet18")
    with pytest.raises(ExportError, match="opset 13 is too old"):
        export_onnx(model, meta, tmp_path / "m.onnx", opset=13)


def test_round_trip_of_a_model_with_an_apex_head(tmp_path: Path):
    torch.manual_seed(0)
    cfg = ModelConfig(arch="Unet", encoder="mobilenet_v2", apex_head=True)
    io = ModelIO(IO.input_size, IO.mean, IO.std, IO.threshold, apex_threshold=0.2)
    model = create_model(cfg).eval()
    meta = {"model": cfg.model_dump(mode="json"), **io.to_sidecar()}
    result = export_onnx(model, meta, tmp_path / "m.onnx", size_multiple=32)
    predictor = OnnxPredictor(result.path)
    assert predictor.io == io and predictor.has_apex_head
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        ref = model(x).numpy()
    got = predictor.infer(x.numpy())
    assert got.shape == ref.shape == (2, 2, 64, 64)
    assert float(np.abs(got - ref).max()) <= 1e-4
