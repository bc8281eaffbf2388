"""`spraycv refiner train`: train the near-orifice refiner on canonical crops."""

from __future__ import annotations

from pathlib import Path

import typer

refiner_app = typer.Typer(help="The near-orifice refinement stage.", no_args_is_help=True)


@refiner_app.command("train")
def train_refiner_cmd(
    overrides: list[str] = typer.Argument(None, help="Config overrides, e.g. steps=5000"),
    config: Path | None = typer.Option(None, "--config", "-c", help="YAML file under configs/."),
) -> None:
    """Train (or resume, from runs/NAME/last_state.pt) a refiner on rendered data.

    Writes runs/NAME/: best.safetensors and last.safetensors with JSON sidecars, log.jsonl
    and last_state.pt; a checkpoint every checkpoint_every_s seconds.
    """
    from spraycv.config.loader import ConfigError, load_config
    from spraycv.config.refine import RefinerTrainConfig
    from spraycv.refine.train import train_refiner

    try:
        cfg = load_config(RefinerTrainConfig, config, list(overrides or []))
        files = train_refiner(cfg, log=typer.echo)
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"weights: {files.best}")
