"""Model export: ONNX (FP32), INT8 ONNX for the CPU, TensorRT engines; each parity-checked.

Public API:
    export_model(weights, format="onnx", out=None, *, parity_images=50, **flags) -> ExportResult
    FORMATS, FLAG_DEFAULTS (both read from spraycv.formats.MODEL_FORMATS),
    validate_request(format, flags, out), ExportError, ParityError
    compare_predictors(reference, candidate, images, tolerance) -> ParityReport
"""

from __future__ import annotations

from spraycv.export.exporter import ExportResult, ParityError, export_model
from spraycv.export.formats import FLAG_DEFAULTS, FORMATS, ExportError, validate_request
from spraycv.export.parity import ParityReport, Tolerance, compare_predictors, rendered_images

__all__ = [
    "FLAG_DEFAULTS",
    "FORMATS",
    "ExportError",
    "ExportResult",
    "ParityError",
    "ParityReport",
    "Tolerance",
    "compare_predictors",
    "export_model",
    "rendered_images",
    "validate_request",
]
