"""`spraycv apex-head`: add a nozzle-apex heatmap head to a trained model."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.errors import ExitCode, exits
from spraycv.config.apex_head import ApexHeadConfig  # light: pydantic only


def _default(name: str) -> str:
    value = ApexHeadConfig.model_fields[name].get_default(call_default_factory=True)
    return f" (default: {value})"


@exits(((ValueError, FileNotFoundError), ExitCode.BAD_REQUEST))  # config, checkpoint, data
def apex_head(
    ctx: typer.Context,
    weights: Path | None = typer.Option(None, help="Trained checkpoint." + _default("weights")),
    data: Path | None = typer.Option(None, help="Rendered dataset." + _default("data")),
    val_data: Path | None = typer.Option(None, "--val", help="Scored after training."),
    out: Path | None = typer.Option(None, help="New checkpoint." + _default("out")),
    epochs: int | None = typer.Option(None, help="Epochs." + _default("epochs")),
    max_images: int | None = typer.Option(None, help="Use the first N training images."),
    lr: float | None = typer.Option(None, help="One-cycle peak rate." + _default("lr")),
    keep_head: bool | None = typer.Option(
        None, help="Fine-tune the model's own head, not a fresh one." + _default("keep_head")
    ),
    teacher: Path | None = typer.Option(
        None, help="Learn this model's apex heat instead of the rendered apexes."
    ),
    threshold: float | None = typer.Option(None, help="Peak threshold." + _default("threshold")),
    threads: int | None = typer.Option(None, help="CPU threads."),
    device: str | None = typer.Option(None, help="cpu | cuda." + _default("device")),
    quiet: bool = typer.Option(False, help="No progress bars."),
) -> None:
    """Train an apex heatmap head on a frozen model and save the model with it.

    The masks do not change. The head marks where the nozzles are, which settles the
    corners of triangle-like plumes the mask alone cannot (measure_cones' apex_prior).
    """
    # every option but --quiet is a field of the config; one left unset keeps its default
    given = {k: v for k, v in ctx.params.items() if k != "quiet" and v is not None}
    cfg = ApexHeadConfig(**given)
    from spraycv.training.apex_head import train_apex_head

    path, _ = train_apex_head(cfg, progress=not quiet, log=typer.echo)
    typer.echo(f"saved {path}")
