"""INT8 for the CPU: ONNX Runtime static quantisation (QDQ), calibrated on rendered images."""

from __future__ import annotations

import contextlib
import io as _io
import json
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spraycv.runtime.processing import ModelIO, preprocess

APEX_SCOPE = "/apex/"  # ONNX node names of spraycv.models.apex_head's head (module "apex")


@dataclass(frozen=True)
class QuantOptions:
    """How to quantise (names of onnxruntime.quantization enums, so they go into metadata).

    Defaults: per-channel symmetric S8 weights, U8 activations (MLAS's U8S8 kernels, VNNI on
    x86), MinMax calibration. `float_head` / `float_tail` keep the first / last N Conv nodes
    and everything before / after them in float: the stem sees re-quantised pixels, and a
    model trained on soft masks has many logits near the threshold (see recipes.INT8_LADDER).
    """

    per_channel: bool = True
    activation_type: str = "QUInt8"
    weight_type: str = "QInt8"
    calibrate_method: str = "MinMax"
    float_head: int = 0  # leading Conv nodes (and every node before them) kept in float
    float_tail: int = 0  # trailing Conv nodes (and every node after them) kept in float
    op_types: tuple[str, ...] = ()  # ops to quantise; () = every op ORT can quantise
    exclude: tuple[str, ...] = ()  # nodes whose names contain one of these stay in float
    reduce_range: bool = False  # 7-bit weights, for CPUs without VNNI that saturate U8S8

    @property
    def label(self) -> str:
        """A short description, e.g. "U8S8 per-channel Percentile, float head 5 tail 0"."""
        bits = {"QUInt8": "U8", "QInt8": "S8", "QUInt16": "U16", "QInt16": "S16"}
        kinds = bits.get(self.activation_type, "?") + bits.get(self.weight_type, "?")
        scales = "per-channel" if self.per_channel else "per-tensor"
        ends = f", float head {self.float_head} tail {self.float_tail}"
        return f"{kinds} {scales} {self.calibrate_method}" + (
            ends if self.float_head or self.float_tail else ""
        )


class RenderedCalibrationReader:
    """An onnxruntime CalibrationDataReader over pre-processed rendered images, one at a time.

    images: N (H, W, 3) uint8 BGR images; each get_next() yields {input: (1, 3, h, w)}.
    """

    def __init__(self, images: Sequence[np.ndarray], io: ModelIO, input_name: str):
        self._batches = [preprocess([image], io) for image in images]
        self._input = input_name
        self._next = 0

    def get_next(self) -> dict[str, np.ndarray] | None:
        if self._next >= len(self._batches):
            return None
        self._next += 1
        return {self._input: self._batches[self._next - 1]}

    def rewind(self) -> None:
        self._next = 0

    def __len__(self) -> int:
        return len(self._batches)


def _as_reader(reader: RenderedCalibrationReader) -> Any:
    """The reader as a subclass of ORT's ABC (imported lazily, so this module stays light)."""
    from onnxruntime.quantization import CalibrationDataReader

    class _Reader(CalibrationDataReader):
        def get_next(self) -> dict[str, np.ndarray] | None:
            return reader.get_next()

        def rewind(self) -> None:
            reader.rewind()

    return _Reader()


def shape_path_nodes(nodes: Sequence[Any], initializers: set[str]) -> list[str]:
    """Nodes that only compute shapes (from Shape ops and constants): never quantise them.

    Quantising e.g. the arithmetic behind a dynamic 'SAME' pad rounds the pad sizes, and the
    feature maps come out with the wrong size. Nodes are in topological order (ONNX requires).
    """
    shape_tensors: set[str] = set()
    constant = set(initializers)
    names = []
    for node in nodes:
        inputs = [i for i in node.input if i]
        if node.op_type == "Constant" or (inputs and all(i in constant for i in inputs)):
            constant.update(node.output)
        elif node.op_type == "Shape" or (
            inputs
            and all(i in constant or i in shape_tensors for i in inputs)
            and any(i in shape_tensors for i in inputs)
        ):
            shape_tensors.update(node.output)
            names.append(node.name)
    return names


def excluded_nodes(model_path: Path, options: QuantOptions) -> list[str]:
    """Node names kept in float: shape arithmetic, the graph's ends set by `float_head` and
    `float_tail`, and names that contain one of `options.exclude`."""
    import onnx

    graph = onnx.load(str(model_path), load_external_data=False).graph
    nodes = list(graph.node)
    # the ends are those of the mask path: an apex head (traced after the mask head) is
    # quantised with the body, its peaks need far less precision than the mask's edge
    convs = [
        i for i, node in enumerate(nodes) if node.op_type == "Conv" and APEX_SCOPE not in node.name
    ]
    ends = [
        convs[options.float_head - 1] + 1 if options.float_head > 0 else 0,
        convs[-options.float_tail] if options.float_tail > 0 else len(nodes),
    ]
    tail = [n.name for n in nodes[ends[1] :] if APEX_SCOPE not in n.name]
    edges = [n.name for n in nodes[: ends[0]]] + tail
    named = [n.name for n in nodes if any(part in n.name for part in options.exclude)]
    shapes = shape_path_nodes(nodes, {t.name for t in graph.initializer})
    return sorted(set(edges) | set(named) | set(shapes))


def quantize_onnx(
    fp32_path: Path,
    out: Path,
    calibration_images: Sequence[np.ndarray],
    io: ModelIO,
    options: QuantOptions | None = None,
) -> Path:
    """Write an INT8 QDQ model of `fp32_path` to `out`, keeping and extending its metadata.

    Args:
        calibration_images: (H, W, 3) uint8 BGR images (rendered, never the parity set).
    """
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from spraycv.export.onnx_export import INPUT_NAME, METADATA_KEY, write_metadata

    options = options or QuantOptions()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    props = {p.key: p.value for p in onnx.load(str(fp32_path)).metadata_props}
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        # ONNX shape inference + graph optimisation first, as ORT recommends for QDQ placement.
        # Its symbolic inference is skipped: CNNs do not need it, and when it fails it leaves
        # a temporary model with external data in the working directory.
        quant_pre_process(str(fp32_path), str(prepared), skip_symbolic_shape=True)
        with contextlib.redirect_stdout(_io.StringIO()):  # the calibrators print progress
            quantize_static(
                str(prepared),
                str(out),
                _as_reader(RenderedCalibrationReader(calibration_images, io, INPUT_NAME)),
                quant_format=QuantFormat.QDQ,
                per_channel=options.per_channel,
                reduce_range=options.reduce_range,
                activation_type=getattr(QuantType, options.activation_type),
                weight_type=getattr(QuantType, options.weight_type),
                calibrate_method=getattr(CalibrationMethod, options.calibrate_method),
                nodes_to_exclude=excluded_nodes(prepared, options),
                op_types_to_quantize=list(options.op_types) or None,
            )
    if METADATA_KEY in props:
        body = json.loads(props[METADATA_KEY])
        body.update(
            precision="int8",
            quantization={**asdict(options), "calibration_images": len(calibration_images)},
        )
        props[METADATA_KEY] = json.dumps(body)
    write_metadata(out, props)
    return out
