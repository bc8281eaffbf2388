"""`spraycv export`: a checkpoint to ONNX, INT8 ONNX or a TensorRT engine, parity-checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from spraycv.cli.errors import ExitCode, bad_request, exits
from spraycv.export.exporter import ParityError, export_model
from spraycv.export.formats import FORMATS, ExportError, flag_help, format_table
from spraycv.formats import FORMAT_FLAGS


def _format_flag(name: str) -> Any:
    """The option of a format flag, its default and help read from the format table."""
    flag = FORMAT_FLAGS[name]
    return typer.Option(flag.default, help=flag_help(flag))


# The format flags are spelled out below rather than generated from the table, so that the
# signature stays plain Typer; tests/cli/test_export_options.py fails when they drift.
@exits(
    (ParityError, ExitCode.INPUTS_FAILED),  # a subclass of ExportError: first
    ((ExportError, ValueError, FileNotFoundError), ExitCode.BAD_REQUEST),  # CheckpointError too
)
def export(
    ctx: typer.Context,
    weights: Path | None = typer.Option(None, help="The .safetensors checkpoint (sidecar beside)."),
    fmt: str = typer.Option("onnx", "--format", "-f", help=" | ".join(FORMATS) + "."),
    out: Path | None = typer.Option(None, help="Output file (default: next to the weights)."),
    half: bool = _format_flag("half"),
    int8: bool = _format_flag("int8"),
    fixed_size: bool = _format_flag("fixed_size"),
    calib_images: int = _format_flag("calib_images"),
    per_tensor: bool = _format_flag("per_tensor"),
    max_batch: int = _format_flag("max_batch"),
    opt_batch: int = _format_flag("opt_batch"),
    workspace_gb: float = _format_flag("workspace_gb"),
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
    flags = {name: ctx.params[name] for name in FORMAT_FLAGS}
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
