"""TensorRT backend: an `.engine` plus its `.engine.json` sidecar, I/O through torch CUDA tensors.

An engine is tied to the GPU model and TensorRT version that built it; the sidecar records
both, and a mismatch is a clear error instead of a crash inside TensorRT.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from spraycv.io.sidecar import read_json_sidecar
from spraycv.runtime.predictor import ModelLoadError, Predictor
from spraycv.runtime.processing import ModelIO

ENGINE_FORMAT = "spraycv-engine/1"


def engine_sidecar_path(engine: Path) -> Path:
    """`best.fp16.engine` -> `best.fp16.engine.json` (never the checkpoint's `best.json`)."""
    return Path(engine).with_name(Path(engine).name + ".json")


def import_tensorrt(what: object = "TensorRT") -> Any:
    """The tensorrt module, or a ModelLoadError naming `what` and saying how to install it."""
    try:
        import tensorrt
    except ImportError as exc:
        raise ModelLoadError(
            f"{what}: TensorRT is not installed ({exc}); pip install 'spraycv[tensorrt]' on a "
            "machine with an NVIDIA GPU, or use the .onnx export with ONNX Runtime"
        ) from None
    return tensorrt


def require_cuda(what: object = "TensorRT") -> Any:
    """torch, after checking that a CUDA GPU is visible."""
    import torch

    if not torch.cuda.is_available():
        raise ModelLoadError(f"{what}: TensorRT engines need a CUDA GPU; torch sees none here")
    return torch


def read_engine_sidecar(engine: Path) -> dict[str, Any]:
    return read_json_sidecar(engine_sidecar_path(engine), engine, ENGINE_FORMAT, ModelLoadError)


def torch_dtype(trt: Any, dtype: Any) -> Any:
    """TensorRT DataType -> torch dtype (a table, not a chain of ifs)."""
    import torch

    table = {
        trt.DataType.FLOAT: torch.float32,
        trt.DataType.HALF: torch.float16,
        trt.DataType.INT8: torch.int8,
        trt.DataType.INT32: torch.int32,
        trt.DataType.BOOL: torch.bool,
    }
    if hasattr(trt.DataType, "BF16"):
        table[trt.DataType.BF16] = torch.bfloat16
    return table[dtype]


class TensorRTPredictor(Predictor):
    """A deserialised TensorRT engine run with `execute_async_v3` on torch's CUDA stream."""

    backend = "tensorrt"

    def __init__(self, weights: Path, device: str = "cuda", threads: int | None = None):
        del threads  # a GPU engine has no CPU thread pool to size
        weights = Path(weights)
        if not weights.is_file():
            raise ModelLoadError(f"engine file not found: {weights}")
        meta = read_engine_sidecar(weights)
        trt = import_tensorrt(weights)
        torch = require_cuda(weights)
        self._trt, self._torch = trt, torch
        index = 0 if device in ("cpu", "cuda", "auto") else torch.device(device).index or 0
        self.device = torch.device("cuda", index)
        gpu = torch.cuda.get_device_name(self.device)
        built = meta.get("tensorrt_version"), meta.get("gpu")
        if built != (trt.__version__, gpu):
            raise ModelLoadError(
                f"{weights}: built with TensorRT {built[0]} for {built[1]}; this is TensorRT "
                f"{trt.__version__} on {gpu}. Rebuild it here with `spraycv export --format "
                "tensorrt` (engines are tied to their GPU and TensorRT version)"
            )
        self._logger = trt.Logger(trt.Logger.WARNING)
        with torch.cuda.device(self.device):
            self.engine = trt.Runtime(self._logger).deserialize_cuda_engine(weights.read_bytes())
            if self.engine is None:
                raise ModelLoadError(f"{weights}: corrupt or truncated TensorRT engine")
            self.context = self.engine.create_execution_context()
        names = [self.engine.get_tensor_name(i) for i in range(self.engine.num_io_tensors)]
        modes = {n: self.engine.get_tensor_mode(n) for n in names}
        self.input_name = next(n for n in names if modes[n] == trt.TensorIOMode.INPUT)
        self.output_name = next(n for n in names if modes[n] == trt.TensorIOMode.OUTPUT)
        min_shape, _, max_shape = self.engine.get_tensor_profile_shape(self.input_name, 0)
        self.min_batch, self.max_batch = int(min_shape[0]), int(max_shape[0])
        super().__init__(ModelIO.from_sidecar(meta), meta)

    def run_cuda(self, x: Any) -> Any:
        """(n, 3, h, w) CUDA tensor, n within the profile -> (n, 1, h, w) CUDA logits."""
        torch, trt, ctx = self._torch, self._trt, self.context
        x = x.to(torch_dtype(trt, self.engine.get_tensor_dtype(self.input_name))).contiguous()
        if not ctx.set_input_shape(self.input_name, tuple(x.shape)):
            raise ValueError(f"input shape {tuple(x.shape)} is outside the engine's profile")
        out_dtype = torch_dtype(trt, self.engine.get_tensor_dtype(self.output_name))
        shape = tuple(ctx.get_tensor_shape(self.output_name))
        y = torch.empty(shape, dtype=out_dtype, device=self.device)
        ctx.set_tensor_address(self.input_name, x.data_ptr())
        ctx.set_tensor_address(self.output_name, y.data_ptr())
        # the current torch stream: ordered after the host-to-device copy, no extra sync
        if not ctx.execute_async_v3(torch.cuda.current_stream(self.device).cuda_stream):
            raise RuntimeError("TensorRT execute_async_v3 failed")
        return y

    def infer(self, batch: np.ndarray) -> np.ndarray:
        torch = self._torch
        outputs = []
        with torch.cuda.device(self.device):
            x = torch.from_numpy(np.ascontiguousarray(batch, np.float32)).to(self.device)
            for start in range(0, x.shape[0], self.max_batch):  # chunks fit the profile
                chunk = x[start : start + self.max_batch]
                pad = self.min_batch - chunk.shape[0]
                if pad > 0:  # a profile with min batch > 1: pad, then drop the padding
                    chunk = torch.cat([chunk, chunk[-1:].expand(pad, *chunk.shape[1:])])
                outputs.append(self.run_cuda(chunk)[: chunk.shape[0] - max(pad, 0)])
            logits = torch.cat(outputs).float().cpu()  # .cpu() synchronises the stream
        return logits.numpy()

    @property
    def name(self) -> str:
        return super().name.replace(")", f" {self.meta.get('precision', '?')})")
