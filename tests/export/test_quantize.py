from __future__ import annotations

import json
import math
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from spraycv.export.onnx_export import METADATA_KEY, export_onnx
from spraycv.export.parity import TOLERANCES, compare_predictors, rendered_images
from spraycv.export.quantize import QuantOptions, excluded_nodes, quantize_onnx, shape_path_nodes
from spraycv.runtime.onnx_backend import OnnxPredictor
from spraycv.runtime.predictor import TorchPredictor
from spraycv.runtime.processing import ModelIO

IO = ModelIO((64, 64), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, tiny_checkpoint) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("q")
    weights, model, side = tiny_checkpoint(root, "Unet", "tu-tf_mobilenetv3_small_100", IO)
    fp32 = export_onnx(model, side, root / "m.onnx", dynamic_hw=False).path
    return weights, fp32


def test_int8_model_keeps_metadata_and_gets_a_parity_report(exported, tmp_path: Path):
    weights, fp32 = exported
    out = quantize_onnx(fp32, tmp_path / "m.int8.onnx", rendered_images(4, 96, 7), IO)
    proto = onnx.load(str(out))
    ops = {n.op_type for n in proto.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops  # QDQ format
    body = json.loads({p.key: p.value for p in proto.metadata_props}[METADATA_KEY])
    assert body["precision"] == "int8" and body["quantization"]["per_channel"] is True
    predictor = OnnxPredictor(out)
    assert predictor.io == IO
    report = compare_predictors(TorchPredictor(weights), predictor, rendered_images(3, 96))
    assert report.n_images == 3 and 0.0 <= report.mask_iou <= 1.0
    assert math.isfinite(report.max_logit_diff) and "mask IoU" in report.summary()
    assert report.to_dict()["ok"] == report.ok


def test_float_ends_and_shape_arithmetic_stay_out_of_quantisation(exported):
    _, fp32 = exported
    nodes = onnx.load(str(fp32)).graph.node
    convs = [n.name for n in nodes if n.op_type == "Conv"]
    kept = excluded_nodes(fp32, QuantOptions(float_head=2, float_tail=1))
    assert set(convs[:2]) | {convs[-1]} <= set(kept)
    assert not set(convs[2:-1]) & set(kept)


def test_shape_path_nodes_follow_shape_ops_only():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT, name="cast"),
        helper.make_node("Div", ["sf", "two"], ["half"], name="div"),
        helper.make_node("Mul", ["x", "two"], ["y"], name="data_mul"),
        helper.make_node("Add", ["y", "half"], ["z"], name="mixed_add"),
    ]
    assert shape_path_nodes(nodes, {"two"}) == ["shape", "cast", "div"]


def test_tolerances_match_the_acceptance_figures():
    assert TOLERANCES["fp32"].max_logit_diff == 1e-4 and TOLERANCES["fp32"].min_mask_iou == 0.999
    assert TOLERANCES["int8"].min_mask_iou == 0.99
    assert TOLERANCES["int8"].max_median_angle_diff == 0.3
