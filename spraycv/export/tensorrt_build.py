"""ONNX -> TensorRT engine with the TensorRT 10 Python API (ONNX parser, FP16/INT8, profile).

An engine only runs on the GPU model and TensorRT version that built it, so a JSON sidecar
(`<engine>.json`) records both, with the precision, the profile shapes and the model's I/O.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spraycv.export.formats import ExportError
from spraycv.runtime.predictor import ModelLoadError
from spraycv.runtime.processing import ModelIO
from spraycv.runtime.tensorrt_backend import (
    ENGINE_FORMAT,
    engine_sidecar_path,
    import_tensorrt,
    require_cuda,
)

# precision -> builder flags; INT8 also allows FP16 for layers without an INT8 kernel
PRECISION_FLAGS: dict[str, tuple[str, ...]] = {
    "fp32": (),
    "fp16": ("FP16",),
    "int8": ("FP16", "INT8"),
}


@dataclass(frozen=True)
class Profile:
    """The optimisation profile's batch sizes (H and W are the model's input size)."""

    min_batch: int = 1
    opt_batch: int = 1
    max_batch: int = 16

    def shapes(self, h: int, w: int) -> dict[str, list[int]]:
        return {
            "min": [self.min_batch, 3, h, w],
            "opt": [self.opt_batch, 3, h, w],
            "max": [self.max_batch, 3, h, w],
        }


def _calibrator(trt: Any, torch: Any, batches: np.ndarray, batch_size: int) -> Any:
    """An entropy calibrator that feeds (N, 3, h, w) float32 images through CUDA tensors."""

    class ImageCalibrator(trt.IInt8EntropyCalibrator2):
        def __init__(self) -> None:
            trt.IInt8EntropyCalibrator2.__init__(self)  # pybind: the base init must be called
            self.index = 0
            self.current = None  # keeps the device buffer alive while TensorRT reads it

        def get_batch_size(self) -> int:
            return batch_size

        def get_batch(self, names: list[str]) -> list[int] | None:
            if self.index + batch_size > len(batches):
                return None
            chunk = batches[self.index : self.index + batch_size]
            self.current = torch.from_numpy(np.ascontiguousarray(chunk)).cuda()
            self.index += batch_size
            return [int(self.current.data_ptr())]

        def read_calibration_cache(self) -> bytes | None:
            return None  # always calibrate on the images given: no stale cache

        def write_calibration_cache(self, cache: Any) -> None:
            return None

    return ImageCalibrator()


def _check_request(precision: str, calibration: np.ndarray | None) -> None:
    """Raise ExportError for an unknown precision, or INT8 without calibration images."""
    if precision not in PRECISION_FLAGS:
        raise ExportError(f"unknown precision {precision!r}; valid: {', '.join(PRECISION_FLAGS)}")
    if precision == "int8" and (calibration is None or not len(calibration)):
        raise ExportError("an INT8 engine needs calibration images")


def _parse_onnx(trt: Any, builder: Any, logger: Any, onnx_path: Path) -> tuple[Any, Any]:
    """(network, parser) with the ONNX file parsed into the network; the parser owns the
    weights, so the caller keeps it until the engine is built."""
    network = builder.create_network(0)  # explicit batch is the only mode in TensorRT 10
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise ExportError(f"{onnx_path}: TensorRT's ONNX parser failed: {errors}")
    return network, parser


def _builder_config(trt: Any, builder: Any, precision: str, workspace_gb: float) -> Any:
    """The builder config: the workspace limit and the precision's flags (no TF32 in FP32)."""
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace_gb * 2**30))
    if precision == "fp32":
        config.clear_flag(trt.BuilderFlag.TF32)  # TF32 convolutions would break FP32 parity
    for flag in PRECISION_FLAGS[precision]:
        config.set_flag(getattr(trt.BuilderFlag, flag))
    return config


def _engine_sidecar(
    trt: Any,
    torch: Any,
    network: Any,
    input_name: str,
    shapes: dict[str, list[int]],
    precision: str,
    onnx_path: Path,
    meta: dict[str, Any],
) -> dict[str, Any]:
    """The engine's sidecar: the TensorRT version and GPU that built it, the precision, the
    profile shapes, the I/O names and the model's I/O contract."""
    return {
        "format": ENGINE_FORMAT,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "tensorrt_version": trt.__version__,
        "gpu": torch.cuda.get_device_name(),
        "compute_capability": list(torch.cuda.get_device_capability()),
        "precision": precision,
        "input_name": input_name,
        "output_name": network.get_output(0).name,
        "shapes": shapes,
        "source_onnx": str(onnx_path),
        "model": meta["model"],
        **ModelIO.from_sidecar(meta).to_sidecar(),  # what the runtime reads, in one place
        "resize": "stretch",  # one input size: frames are stretched to it
    }


def build_engine(
    onnx_path: Path,
    out: Path,
    meta: dict[str, Any],
    precision: str = "fp16",
    calibration: np.ndarray | None = None,
    profile: Profile | None = None,
    workspace_gb: float = 4.0,
) -> Path:
    """Build and serialise an engine, then write its sidecar.

    Args:
        onnx_path: an FP32 ONNX file from `export_onnx` (dynamic batch).
        meta: the checkpoint sidecar (model, input_size, normalization, threshold).
        precision: a key of PRECISION_FLAGS.
        calibration: (N, 3, h, w) float32 pre-processed images, needed for "int8".
    """
    _check_request(precision, calibration)
    try:
        trt, torch = import_tensorrt(onnx_path), require_cuda(onnx_path)
    except ModelLoadError as exc:
        raise ExportError(str(exc)) from None
    profile = profile or Profile()
    h, w = (int(v) for v in meta["input_size"])
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    # the parser owns the weights: held (unused) until the function returns, as before
    network, _parser = _parse_onnx(trt, builder, logger, onnx_path)
    config = _builder_config(trt, builder, precision, workspace_gb)
    input_name = network.get_input(0).name
    shapes = profile.shapes(h, w)
    trt_profile = builder.create_optimization_profile()
    trt_profile.set_shape(input_name, shapes["min"], shapes["opt"], shapes["max"])
    config.add_optimization_profile(trt_profile)
    if precision == "int8":
        batch = max(profile.min_batch, min(8, profile.max_batch, len(calibration)))
        config.int8_calibrator = _calibrator(trt, torch, calibration, batch)
        config.set_calibration_profile(trt_profile)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise ExportError(f"TensorRT could not build an engine from {onnx_path} (log above)")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(bytes(memoryview(serialized)))
    sidecar = _engine_sidecar(trt, torch, network, input_name, shapes, precision, onnx_path, meta)
    engine_sidecar_path(out).write_text(json.dumps(sidecar, indent=2) + "\n")
    return out
