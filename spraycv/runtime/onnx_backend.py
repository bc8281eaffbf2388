"""ONNX Runtime backend: an `.onnx` file written by `spraycv export` (FP32 or INT8)."""

from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from spraycv.runtime.predictor import ModelLoadError, Predictor
from spraycv.runtime.processing import ModelIO

log = logging.getLogger(__name__)

GPU_PROVIDERS = ("TensorrtExecutionProvider", "CUDAExecutionProvider")
CPU_PROVIDER = "CPUExecutionProvider"
METADATA_KEY = "spraycv"  # written by spraycv.export.onnx_export.model_metadata


def cpu_cores() -> int:
    """Cores this process may run on (the affinity mask, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def read_onnx_metadata(session: Any, path: Path) -> dict[str, Any]:
    """The spraycv metadata of a loaded session, or a ModelLoadError naming the file."""
    props = session.get_modelmeta().custom_metadata_map
    if METADATA_KEY not in props:
        raise ModelLoadError(
            f"{path}: no {METADATA_KEY!r} metadata in this ONNX file; "
            "write it with `spraycv export` so that its pre-processing is known"
        )
    try:
        return json.loads(props[METADATA_KEY])
    except json.JSONDecodeError as exc:
        raise ModelLoadError(f"{path}: unreadable {METADATA_KEY!r} metadata ({exc})") from None


class OnnxPredictor(Predictor):
    """ONNX Runtime with the best available provider: TensorRT, then CUDA, then CPU.

    device "cpu" asks for the CPU provider only; "cuda" or "auto" ask for every available
    provider in that order, and a warning says so when the session falls back to the CPU.
    spin: let idle threads spin after each call (ONNX Runtime's default; off here).
    """

    backend = "onnxruntime"

    def __init__(
        self, weights: Path, device: str = "cpu", threads: int | None = None, spin: bool = False
    ):
        import onnxruntime as ort

        weights = Path(weights)
        if not weights.is_file():
            raise ModelLoadError(f"ONNX file not found: {weights}")
        available = ort.get_available_providers()
        wanted = (
            [CPU_PROVIDER]
            if device == "cpu"
            else [p for p in (*GPU_PROVIDERS, CPU_PROVIDER) if p in available]
        )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or cpu_cores()
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # idle threads do not spin: the model's and the refiner's sessions, and the geometry
        # between them, share the cores, and spinning threads of one slow the others
        # (INT8 pipeline 20.2 -> 23.7 frames/s; benchmarks/ort_spinning.py)
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        try:
            self.session = ort.InferenceSession(str(weights), options, providers=wanted)
        except Exception as exc:  # ORT raises InvalidProtobuf, Fail, ... from its C++ core
            raise ModelLoadError(
                f"{weights}: corrupt, truncated or unsupported ONNX file ({exc})"
            ) from None
        self.providers = self.session.get_providers()
        self._warn_on_fallback(device, wanted)
        meta = read_onnx_metadata(self.session, weights)
        self.input_name = self.session.get_inputs()[0].name
        self.output_name = self.session.get_outputs()[0].name
        super().__init__(ModelIO.from_sidecar(meta), meta)

    def _warn_on_fallback(self, device: str, wanted: list[str]) -> None:
        if device == "cpu":
            return
        lost = [p for p in wanted if p in GPU_PROVIDERS and p not in self.providers]
        on_gpu = any(p in GPU_PROVIDERS for p in self.providers)
        if lost or (device == "cuda" and not on_gpu):
            message = (
                f"ONNX Runtime runs on {self.providers[0]}, not the GPU: "
                f"{', '.join(lost) or 'no GPU provider'} unavailable "
                f"(installed: {', '.join(wanted)}; onnxruntime-gpu brings CUDA/TensorRT, "
                "or measure with the .safetensors checkpoint to run PyTorch on the GPU)"
            )
            warnings.warn(message, RuntimeWarning, stacklevel=3)
        else:
            log.info("ONNX Runtime providers: %s", ", ".join(self.providers))

    def infer(self, batch: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(batch, dtype=np.float32)
        return self.session.run([self.output_name], {self.input_name: x})[0]

    @property
    def name(self) -> str:
        precision = self.meta.get("precision", "fp32")
        return super().name.replace(")", f" {precision})")
