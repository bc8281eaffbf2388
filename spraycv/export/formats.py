"""Export formats as a data table, and the up-front validation of an export request."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


class ExportError(ValueError):
    """An export that cannot be done as asked: bad format, flag, file or missing dependency."""


@dataclass(frozen=True)
class ExportFormat:
    """One export target.

    flags: the format-specific options (CLI flags without `--`) that apply to it; any other
        one given is an error rather than silently ignored.
    device: where the exported file runs ("cpu", "gpu" or "cpu+gpu").
    module: the Python module the export needs; extra: the pip extra that installs it.
    """

    name: str
    suffix: str
    flags: frozenset[str]
    device: Literal["cpu", "gpu", "cpu+gpu"]
    module: str
    extra: str | None
    description: str

    def default_output(self, weights: Path, half: bool = False, int8: bool = False) -> Path:
        """`runs/x/best.safetensors` -> `runs/x/best.onnx`, `best.int8.onnx`, `best.fp16.engine`."""
        tag = {"onnx": "", "onnx-int8": ".int8"}.get(self.name)
        if tag is None:  # TensorRT: the precision is part of the name
            tag = ".int8" if int8 else ".fp16" if half else ".fp32"
        return Path(weights).with_name(Path(weights).stem + tag + self.suffix)


# Flags every format accepts (they steer the export, not the file format).
COMMON_FLAGS = frozenset({"opset", "parity_images"})

FORMATS: dict[str, ExportFormat] = {
    f.name: f
    for f in (
        ExportFormat(
            "onnx",
            ".onnx",
            frozenset({"fixed_size"}),
            "cpu+gpu",
            "onnx",
            None,
            "FP32 ONNX for ONNX Runtime (CPU, CUDA or TensorRT providers)",
        ),
        ExportFormat(
            "onnx-int8",
            ".onnx",
            frozenset({"int8", "calib_images", "per_tensor"}),
            "cpu",
            "onnxruntime.quantization",
            None,
            "INT8 ONNX (static QDQ quantisation calibrated on rendered images) for the CPU",
        ),
        ExportFormat(
            "tensorrt",
            ".engine",
            frozenset({"half", "int8", "calib_images", "max_batch", "opt_batch", "workspace_gb"}),
            "gpu",
            "tensorrt",
            "tensorrt",
            "TensorRT engine (FP32, FP16 or INT8), tied to its GPU model and TensorRT version",
        ),
    )
}


def get_format(name: str) -> ExportFormat:
    """Look a format up by name; the error lists the valid names."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ExportError(f"unknown export format {name!r}; valid: {', '.join(FORMATS)}") from None


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_dependency(fmt: ExportFormat) -> None:
    """Raise ExportError naming the package to install when the format's module is missing."""
    top = fmt.module.split(".")[0]
    try:
        found = importlib.util.find_spec(top) is not None and (
            top == fmt.module or importlib.util.find_spec(fmt.module) is not None
        )
    except (ImportError, ValueError):
        found = False
    if not found:
        hint = f"pip install 'spraycv[{fmt.extra}]'" if fmt.extra else f"pip install {top}"
        raise ExportError(f"format {fmt.name!r} needs the Python module {fmt.module!r}: {hint}")


def check_gpu(fmt: ExportFormat) -> None:
    """Raise ExportError when a GPU-only format is asked for on a machine without CUDA."""
    if fmt.device != "gpu":
        return
    import torch

    if not torch.cuda.is_available():
        raise ExportError(
            f"format {fmt.name!r} builds for the GPU it runs on, and no CUDA GPU is visible "
            "here; export 'onnx' and build the engine on the target machine"
        )


def validate_request(
    format_name: str,
    flags: Iterable[str] = (),
    out: Path | None = None,
    check_runtime: bool = True,
) -> ExportFormat:
    """Check an export request before any work is done.

    Args:
        format_name: a key of FORMATS.
        flags: the format-specific options that were given (set to a non-default value),
            as names like "half" or "calib_images".
        out: the output path, whose suffix must be the format's.
        check_runtime: also check the needed module and, for GPU formats, a CUDA GPU.
    Returns:
        The format.
    Raises:
        ExportError: listing the valid formats, the flags that apply, or what to install.
    """
    fmt = get_format(format_name)
    allowed = fmt.flags | COMMON_FLAGS
    wrong = sorted(set(flags) - allowed)
    if wrong:
        where = [n for n, f in FORMATS.items() if all(w in f.flags for w in wrong)]
        hint = f" (they apply to: {', '.join(where)})" if where else ""
        valid = ", ".join(_flag(f) for f in sorted(fmt.flags)) or "none"
        verb = "does" if len(wrong) == 1 else "do"
        raise ExportError(
            f"{', '.join(_flag(w) for w in wrong)} {verb} not apply to format {fmt.name!r}"
            f"{hint}; its flags: {valid}"
        )
    if out is not None and not str(out).lower().endswith(fmt.suffix):
        raise ExportError(f"format {fmt.name!r} writes {fmt.suffix} files; got --out {out}")
    if check_runtime:
        check_dependency(fmt)
        check_gpu(fmt)
    return fmt


def format_table() -> str:
    """The formats as a plain-text table (for `spraycv export --help` and errors)."""
    rows = [("format", "suffix", "runs on", "flags")]
    rows += [
        (f.name, f.suffix, f.device, " ".join(_flag(x) for x in sorted(f.flags)) or "-")
        for f in FORMATS.values()
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
