"""How each export format is written from a checkpoint: the `exporter` of each row of
`spraycv.formats.MODEL_FORMATS`, each an `spraycv.export.job.Exporter`."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from spraycv.export.job import ExportJob
from spraycv.export.parity import CALIB_SEED0, TOLERANCES, compare_predictors, model_inputs
from spraycv.export.quantize import QuantOptions
from spraycv.formats import engine_precision

# INT8 recipes, tried in order until one passes parity on the first INT8_SELECT_IMAGES parity
# images (fastest first): all INT8, then more and more of both ends in float. Percentile
# calibration beat MinMax and Entropy. On the shipped Unet/MobileNetV3 (soft-mask training:
# many logits near the cut) the stem, the first blocks and the full-resolution decoder are
# the sensitive layers: all INT8 gives mask IoU 0.97, with 12 leading and 9 trailing Convs in
# float 0.998 (median angle diff 0.17 deg). Those float layers are also the costly ones.
INT8_LADDER: tuple[QuantOptions, ...] = (
    QuantOptions(calibrate_method="Percentile"),
    QuantOptions(calibrate_method="Percentile", float_head=5),
    QuantOptions(calibrate_method="Percentile", float_head=12, float_tail=7),
    QuantOptions(calibrate_method="Percentile", float_head=12, float_tail=9),
)
INT8_SELECT_IMAGES = 16  # parity images used to pick a recipe; the report uses all of them


def write_onnx(job: ExportJob, fixed: bool | None = None, out: Path | None = None) -> Path:
    """The FP32 ONNX graph every format starts from (fixed: static H and W; None: the
    --fixed-size flag), written to `out` (default: the job's output)."""
    from spraycv.export.onnx_export import export_onnx

    fixed = bool(job.flags["fixed_size"]) if fixed is None else fixed
    result = export_onnx(
        job.model,
        job.meta,
        out or job.out,
        opset=job.opset,
        dynamic_hw=not fixed,
        size_multiple=job.size_multiple,
        source=job.weights.name,
    )
    job.notes.append(f"ONNX: dynamic batch; input sizes: {result.valid_sizes}")
    if not result.dynamic_hw and job.meta.get("resize") == "keep_aspect":
        job.notes.append("one input size: frames that are not square are stretched to it")
    return result.path


def export_onnx_fp32(job: ExportJob) -> tuple[Path, str]:
    return write_onnx(job), "fp32"


def export_onnx_int8(job: ExportJob) -> tuple[Path, str]:
    """Quantise with the first INT8_LADDER recipe that passes parity (else the closest)."""
    from spraycv.export.quantize import quantize_onnx
    from spraycv.runtime.onnx_backend import OnnxPredictor
    from spraycv.runtime.predictor import TorchPredictor

    calib = model_inputs(job.meta, int(job.flags["calib_images"]), job.image_size, CALIB_SEED0)
    ladder = INT8_LADDER
    if job.flags["per_tensor"]:
        ladder = tuple(replace(o, per_channel=False) for o in ladder)
    reference, tol = TorchPredictor(job.weights), TOLERANCES["int8"]
    select = job.images[:INT8_SELECT_IMAGES]
    best: tuple[float, QuantOptions] | None = None
    with tempfile.TemporaryDirectory(dir=job.out.parent) as tmp:
        fp32 = write_onnx(job, out=Path(tmp) / "fp32.onnx")  # frozen pads: dynamic H/W quantise
        for options in ladder:
            quantize_onnx(fp32, job.out, calib, reference.io, options)
            report = compare_predictors(reference, OnnxPredictor(job.out), select, tol)
            job.log(f"INT8 {options.label}: mask IoU {report.mask_iou:.4f} on {len(select)} images")
            if report.ok:
                best = (report.mask_iou, options)
                break
            if best is None or report.mask_iou > best[0]:
                best = (report.mask_iou, options)
        if best[1] != options:  # none passed: rebuild the closest one
            quantize_onnx(fp32, job.out, calib, reference.io, best[1])
    job.notes.append(f"INT8 recipe: {best[1].label}, {len(calib)} calibration images")
    return job.out, "int8"


def export_tensorrt_engine(job: ExportJob) -> tuple[Path, str]:
    """Build a TensorRT engine from a static-shape ONNX graph (INT8: calibrated on renders)."""
    import numpy as np

    from spraycv.export.tensorrt_build import Profile, build_engine
    from spraycv.runtime.processing import ModelIO, preprocess

    precision = engine_precision(bool(job.flags["half"]), bool(job.flags["int8"]))
    profile = Profile(1, int(job.flags["opt_batch"]), int(job.flags["max_batch"]))
    calibration = None
    if precision == "int8":
        calib = model_inputs(job.meta, int(job.flags["calib_images"]), job.image_size, CALIB_SEED0)
        calibration = np.ascontiguousarray(preprocess(calib, ModelIO.from_sidecar(job.meta)))
    workspace_gb = float(job.flags["workspace_gb"])
    with tempfile.TemporaryDirectory(dir=job.out.parent) as tmp:
        onnx_path = write_onnx(job, fixed=True, out=Path(tmp) / "fp32.onnx")
        build_engine(onnx_path, job.out, job.meta, precision, calibration, profile, workspace_gb)
    job.notes.append(f"TensorRT {precision}, batch profile {profile}")
    return job.out, precision
