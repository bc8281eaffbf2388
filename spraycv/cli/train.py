"""`spraycv train`: train one model from a YAML config plus key=value overrides."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.errors import ExitCode, exits


@exits(((ValueError, FileNotFoundError), ExitCode.BAD_REQUEST))  # ConfigError is a ValueError
def train(
    overrides: list[str] = typer.Argument(
        None, help="Config overrides, e.g. epochs=5 optim.lr=1e-3"
    ),
    config: Path | None = typer.Option(None, "--config", "-c", help="YAML file under configs/."),
    precision: str | None = typer.Option(
        None, help="32 | 16-mixed | bf16-mixed (overrides config)."
    ),
    quiet: bool = typer.Option(False, help="No progress bars."),
) -> None:
    """Train a segmentation model; under `torchrun --nproc_per_node=N` it trains with DDP.

    Writes runs/NAME/: best.safetensors and last.safetensors with JSON sidecars,
    metrics.csv, TensorBoard logs and last_state.pt (for resume=true).
    """
    from spraycv.config.loader import load_config
    from spraycv.config.train import TrainConfig
    from spraycv.training.loop import train as run_training

    items = list(overrides or [])
    if precision is not None:
        items.append(f"precision='{precision}'")
    cfg = load_config(TrainConfig, config, items)
    result = run_training(cfg, progress=not quiet)
    if result.best_metrics:
        summary = ", ".join(f"{k} {v:.4g}" for k, v in result.best_metrics.items())
        typer.echo(f"best: {summary}")
    typer.echo(f"weights: {result.best_weights}")
