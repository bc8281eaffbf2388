"""`export_model`: checkpoint -> ONNX / INT8 ONNX / TensorRT engine, always with a parity check."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spraycv.export.formats import (
    FLAG_DEFAULTS,
    SOURCE_SUFFIX,
    ExportError,
    ModelFormat,
    validate_request,
)
from spraycv.export.job import Exporter, ExportJob
from spraycv.export.parity import (
    TOLERANCES,
    ParityReport,
    Tolerance,
    compare_predictors,
    parity_inputs,
)
from spraycv.formats import refiner_companion
from spraycv.paths import SHIPPED_CHECKPOINT, SHIPPED_MODEL


class ParityError(ExportError):
    """The exported model differs from PyTorch past the tolerance."""

    def __init__(self, report: ParityReport, path: Path | None):
        kept = f"; kept at {path}" if path else "; the file was removed"
        super().__init__(f"parity check failed: {'; '.join(report.failures)}{kept}")
        self.report, self.path = report, path


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote and how it compares with PyTorch."""

    path: Path
    format: ModelFormat
    report: ParityReport | None
    notes: list[str] = field(default_factory=list)
    refiner: ExportResult | None = None  # the model's refiner, exported beside it


# the TensorRT FP32 engine runs TF32-free, but kernels sum in another order than PyTorch's CPU
GPU_FP32 = Tolerance(1e-3, 0.999, None)


def export_model(
    weights: str | Path,
    format: str = "onnx",
    out: str | Path | None = None,
    *,
    opset: int = 17,
    parity_images: int = 50,
    image_size: int = 384,
    keep_failed: bool = False,
    log: Callable[[str], None] = print,
    **flags: Any,
) -> ExportResult:
    """Export a checkpoint and check it against PyTorch on rendered images.

    Args:
        weights: a .safetensors checkpoint with its JSON sidecar.
        format: a key of spraycv.export.FORMATS.
        out: the output file (default: next to the weights, see ModelFormat.default_output).
        opset: the ONNX opset (17 or newer).
        parity_images: rendered (image_size x image_size) images for the parity check.
        flags: format-specific options (FLAG_DEFAULTS lists them); one that does not apply to
            the format raises ExportError before any work.
    Raises:
        ExportError: a bad request; ParityError (an ExportError) when parity fails, after
            removing the file unless keep_failed.
    """
    weights = Path(weights)
    fmt, values = _checked_request(weights, format, out, parity_images, flags)
    out = Path(out) if out else fmt.default_output(weights, values["half"], values["int8"])
    parity = (parity_images, image_size)
    result = _export_one(weights, fmt, values, out, parity, opset, log, keep_failed)
    companion = refiner_companion(weights)
    if companion.is_file():  # the model's refiner goes with it, in the same format
        log(f"refiner: {companion} -> {refiner_companion(result.path)}")
        refiner_out = refiner_companion(result.path)
        refined = _export_one(companion, fmt, values, refiner_out, parity, opset, log, keep_failed)
        result = dataclasses.replace(result, refiner=refined)
    return result


def export_shipped(log: Callable[[str], None] = print) -> ExportResult:
    """Export the shipped checkpoint (and its refiner) to the FP32 ONNX files that measure by
    default (spraycv.paths.SHIPPED_MODEL); scripts/ship_model.py and ship_refiner.py call it
    after writing a checkpoint, so that the two never disagree."""
    return export_model(SHIPPED_CHECKPOINT, "onnx", SHIPPED_MODEL, log=log)


def _export_one(
    weights: Path,
    fmt: ModelFormat,
    values: dict[str, Any],
    out: Path,
    parity: tuple[int, int],
    opset: int,
    log: Callable[[str], None],
    keep_failed: bool,
) -> ExportResult:
    """Export one checkpoint to `out` and check its parity (see export_model)."""
    job = _load_job(weights, out, values, parity, opset, log)
    exporter: Exporter = fmt.load_exporter()
    path, precision = exporter(job)
    report = _parity(job, fmt, path, precision)
    log(report.summary())
    if not report.ok:
        if not keep_failed:
            _remove(path)
        raise ParityError(report, path if keep_failed else None)
    return ExportResult(path, fmt, report, job.notes)


def _checked_request(
    weights: Path,
    format_name: str,
    out: str | Path | None,
    parity_images: int,
    flags: dict[str, Any],
) -> tuple[ModelFormat, dict[str, Any]]:
    """The format and every flag's value (defaults filled in), or an ExportError before any
    work is done."""
    unknown = sorted(set(flags) - set(FLAG_DEFAULTS))
    if unknown:
        raise ExportError(f"unknown export options {unknown}; valid: {', '.join(FLAG_DEFAULTS)}")
    given = {k for k, v in flags.items() if v != FLAG_DEFAULTS[k]}
    if parity_images < 1:
        raise ExportError("parity_images must be at least 1: every export is checked")
    if weights.suffix != SOURCE_SUFFIX:
        raise ExportError(f"{weights}: export starts from a {SOURCE_SUFFIX} checkpoint")
    fmt = validate_request(format_name, given, Path(out) if out else None)
    return fmt, {**FLAG_DEFAULTS, **flags}


def _load_job(
    weights: Path,
    out: Path,
    flags: dict[str, Any],
    parity: tuple[int, int],
    opset: int,
    log: Callable[[str], None],
) -> ExportJob:
    """Load the checkpoint and render the parity images: (count, size)."""
    from spraycv.models.registry import get_architecture
    from spraycv.training.checkpoint import load_checkpoint

    out.parent.mkdir(parents=True, exist_ok=True)
    model, meta = load_checkpoint(weights)
    multiple = get_architecture(meta["model"]["arch"]).size_multiple
    images = parity_inputs(meta, *parity)
    return ExportJob(weights, out, model, meta, multiple, flags, images, parity[1], opset, log)


def _parity(job: ExportJob, fmt: ModelFormat, path: Path, precision: str) -> ParityReport:
    from spraycv.runtime.predictor import TorchPredictor, load_predictor

    device = "cuda" if fmt.device == "gpu" else "cpu"
    tol = GPU_FP32 if device == "cuda" and precision == "fp32" else TOLERANCES[precision]
    return compare_predictors(
        TorchPredictor(job.weights), load_predictor(path, device), job.images, tol
    )


def _remove(path: Path) -> None:
    from spraycv.runtime.tensorrt_backend import engine_sidecar_path

    for p in (path, engine_sidecar_path(path)):
        p.unlink(missing_ok=True)
