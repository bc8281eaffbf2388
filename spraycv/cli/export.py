"""`spraycv export`: a checkpoint to ONNX, INT8 ONNX or a TensorRT engine, parity-checked."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.errors import ExitCode, bad_request, exits
from spraycv.export.exporter import ParityError
from spraycv.export.formats import ExportError, format_table


@exits(
    (ParityError, ExitCode.INPUTS_FAILED),  # a subclass of ExportError: first
    ((ExportError, ValueError, FileNotFoundError), ExitCode.BAD_REQUEST),  # CheckpointError too
)
def export(
    weights: Path | None = typer.Option(None, help="The .safetensors checkpoint (sidecar beside)."),
    fmt: str = typer.Option("onnx", "--format", "-f", help="onnx | onnx-int8 | tensorrt."),
    out: Path | None = typer.Option(None, help="Output file (default: next to the weights)."),
    half: bool = typer.Option(False, "--half", help="tensorrt: FP16 engine."),
    int8: bool = typer.Option(False, "--int8", help="tensorrt: INT8 engine, calibrated."),
    fixed_size: bool = typer.Option(False, help="onnx: fix H and W to the input size."),
    calib_images: int = typer.Option(32, help="onnx-int8, tensorrt --int8: rendered images."),
    per_tensor: bool = typer.Option(False, help="onnx-int8: per-tensor weight scales."),
    max_batch: int = typer.Option(16, help="tensorrt: largest batch of the profile."),
    opt_batch: int = typer.Option(1, help="tensorrt: batch the engine is tuned for."),
    workspace_gb: float = typer.Option(4.0, help="tensorrt: builder workspace, GiB."),
    opset: int = typer.Option(17, help="ONNX opset (17 or newer)."),
    parity_images: int = typer.Option(50, help="Rendered images for the parity check."),
    image_size: int = typer.Option(384, help="Size of the rendered parity images, px."),
    keep_failed: bool = typer.Option(False, help="Keep the file when parity fails."),
    list_formats: bool = typer.Option(False, "--list", help="Print the format table, exit."),
) -> None:
    """Export a trained model and check it against PyTorch on rendered images.

    Prints the parity report (max abs logit difference, mask IoU, cone-angle difference);
    exits 1 when it fails (the file is then removed unless --keep-failed), 2 on a bad request.
    """
    if list_formats:
        typer.echo(format_table())
        return
    if weights is None:
        raise bad_request("--weights is required (--list shows the formats)")
    from spraycv.export import export_model

    flags = {
        "half": half,
        "int8": int8,
        "fixed_size": fixed_size,
        "calib_images": calib_images,
        "per_tensor": per_tensor,
        "max_batch": max_batch,
        "opt_batch": opt_batch,
        "workspace_gb": workspace_gb,
    }
    result = export_model(
        weights,
        fmt,
        out,
        opset=opset,
        parity_images=parity_images,
        image_size=image_size,
        keep_failed=keep_failed,
        log=typer.echo,
        **flags,
    )
    for note in result.notes:
        typer.echo(note)
    typer.echo(f"written: {result.path}")
