"""The model-format table: one row per kind of model file spraycv writes or runs.

Each row names its file suffix, the runtime class that runs the file and the function that
exports it, both as "module:attribute" strings imported on first use, and the export flags
that apply to it. The runtime's backends (`spraycv.runtime.predictor.BACKENDS`), the export
formats and flag defaults (`spraycv.export`) and the `spraycv export` options are all read
from here. This module imports only the standard library, so that both the runtime and the
exporter can import it without importing each other, onnxruntime or tensorrt.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

FlagValue = bool | int | float


def cli_flag(name: str) -> str:
    """A parameter name as Typer spells its CLI flag: calib_images -> --calib-images."""
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class Flag:
    """A format-specific export option.

    name: the keyword of `export_model`; with "-" for "_" and a leading "--", the CLI flag.
    default: its value when not given (its type is the option's type); any other value
        counts as given, and a given flag that does not apply to the format is an error.
    help: what it does, without the formats it applies to (the CLI adds those).
    """

    name: str
    default: FlagValue
    help: str

    @property
    def cli(self) -> str:
        return cli_flag(self.name)


HALF = Flag("half", False, "FP16 engine.")
INT8 = Flag("int8", False, "INT8, calibrated on rendered images.")
FIXED_SIZE = Flag("fixed_size", False, "fix H and W to the input size.")
CALIB_IMAGES = Flag("calib_images", 32, "rendered images to calibrate INT8 on.")
PER_TENSOR = Flag("per_tensor", False, "per-tensor weight scales.")
MAX_BATCH = Flag("max_batch", 16, "largest batch of the profile.")
OPT_BATCH = Flag("opt_batch", 1, "batch the engine is tuned for.")
WORKSPACE_GB = Flag("workspace_gb", 4.0, "builder workspace, GiB.")


def load_target(target: str) -> Any:
    """Import "package.module:attribute" and return the attribute."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def engine_precision(half: bool, int8: bool) -> str:
    """The precision a TensorRT engine is built in, from --half and --int8 (INT8 wins)."""
    return "int8" if int8 else "fp16" if half else "fp32"


@dataclass(frozen=True)
class ModelFormat:
    """One kind of model file.

    backend: "module:Class" of the `spraycv.runtime.predictor.Predictor` that runs the file.
    exporter: "module:function" that writes it from a checkpoint, called with an
        `spraycv.export.job.ExportJob` and returning (path, precision); None for the
        checkpoint itself, which every export starts from.
    flags: the format-specific export options that apply to it.
    device: where the file runs.
    requires: the Python module the export needs; extra: the pip extra that installs it.
    output_tag: what the default output name adds before the suffix; None: the engine
        precision that --half / --int8 choose (".fp32", ".fp16", ".int8").
    """

    name: str
    suffix: str
    backend: str
    exporter: str | None
    flags: tuple[Flag, ...]
    device: Literal["cpu", "gpu", "cpu+gpu"]
    requires: str
    extra: str | None
    output_tag: str | None
    description: str

    @property
    def flag_names(self) -> frozenset[str]:
        return frozenset(flag.name for flag in self.flags)

    def load_backend(self) -> type:
        return load_target(self.backend)

    def load_exporter(self) -> Callable[..., Any]:
        if self.exporter is None:
            raise ValueError(f"format {self.name!r} is not written by an exporter")
        return load_target(self.exporter)

    def default_output(self, weights: Path, half: bool = False, int8: bool = False) -> Path:
        """`runs/x/best.safetensors` -> `runs/x/best.onnx`, `best.int8.onnx`, `best.fp16.engine`."""
        weights = Path(weights)
        tag = self.output_tag
        if tag is None:  # a TensorRT engine: its precision is part of the name
            tag = "." + engine_precision(half, int8)
        return weights.with_name(weights.stem + tag + self.suffix)


# The source of every export, run by PyTorch.
CHECKPOINT = ModelFormat(
    name="checkpoint",
    suffix=".safetensors",
    backend="spraycv.runtime.predictor:TorchPredictor",
    exporter=None,
    flags=(),
    device="cpu+gpu",
    requires="torch",
    extra=None,
    output_tag="",
    description="the PyTorch checkpoint (JSON sidecar beside) that training writes",
)

# The order is the order of `spraycv export --list` and of the valid suffixes in errors.
MODEL_FORMATS: tuple[ModelFormat, ...] = (
    CHECKPOINT,
    ModelFormat(
        name="onnx",
        suffix=".onnx",
        backend="spraycv.runtime.onnx_backend:OnnxPredictor",
        exporter="spraycv.export.recipes:export_onnx_fp32",
        flags=(FIXED_SIZE,),
        device="cpu+gpu",
        requires="onnx",
        extra=None,
        output_tag="",
        description="FP32 ONNX for ONNX Runtime (CPU, CUDA or TensorRT providers)",
    ),
    ModelFormat(
        name="onnx-int8",
        suffix=".onnx",
        backend="spraycv.runtime.onnx_backend:OnnxPredictor",
        exporter="spraycv.export.recipes:export_onnx_int8",
        flags=(INT8, CALIB_IMAGES, PER_TENSOR, FIXED_SIZE),
        device="cpu",
        requires="onnxruntime.quantization",
        extra=None,
        output_tag=".int8",
        description="INT8 ONNX (static QDQ quantisation calibrated on rendered images) for the CPU",
    ),
    ModelFormat(
        name="tensorrt",
        suffix=".engine",
        backend="spraycv.runtime.tensorrt_backend:TensorRTPredictor",
        exporter="spraycv.export.recipes:export_tensorrt_engine",
        flags=(HALF, INT8, CALIB_IMAGES, MAX_BATCH, OPT_BATCH, WORKSPACE_GB),
        device="gpu",
        requires="tensorrt",
        extra="tensorrt",
        output_tag=None,
        description=(
            "TensorRT engine (FP32, FP16 or INT8), tied to its GPU model and TensorRT version"
        ),
    ),
)


def _flags_by_name(formats: tuple[ModelFormat, ...]) -> Mapping[str, Flag]:
    """Every flag of the table by name, sorted; a name used for two different flags is a
    mistake in the table, caught on import rather than by a surprised user."""
    flags: dict[str, Flag] = {}
    for flag in (flag for fmt in formats for flag in fmt.flags):
        if flags.setdefault(flag.name, flag) != flag:
            raise ValueError(f"two different export flags are named {flag.name!r}")
    return MappingProxyType(dict(sorted(flags.items())))


FORMAT_FLAGS: Mapping[str, Flag] = _flags_by_name(MODEL_FORMATS)


def refiner_companion(weights: Path) -> Path:
    """Where the refiner that goes with a model file lives: beside it, in the same format
    (`default.safetensors` -> `default.refiner.safetensors`, `default.int8.onnx` ->
    `default.int8.refiner.onnx`); the exporter writes it there, the loader looks there."""
    weights = Path(weights)
    return weights.with_name(f"{weights.stem}.refiner{weights.suffix}")
