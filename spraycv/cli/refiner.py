"""`spraycv refiner train`: train the near-orifice refiner on canonical crops."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.errors import ExitCode, exits

refiner_app = typer.Typer(help="The near-orifice refinement stage.", no_args_is_help=True)


@refiner_app.command("train")
@exits((ValueError, ExitCode.BAD_REQUEST), (FileNotFoundError, ExitCode.BAD_REQUEST))
def train_refiner_cmd(
    overrides: list[str] = typer.Argument(None, help="Config overrides, e.g. steps=5000"),
    config: Path | None = typer.Option(None, "--config", "-c", help="YAML file under configs/."),
) -> None:
    """Train (or resume, from runs/NAME/last_state.pt) a refiner on rendered data.

    Writes runs/NAME/: best.safetensors and last.safetensors with JSON sidecars, log.jsonl
    and last_state.pt; a checkpoint every checkpoint_every_s seconds.
    """
    from spraycv.config.loader import load_config
    from spraycv.config.refine import RefinerTrainConfig
    from spraycv.refine.train import train_refiner

    cfg = load_config(RefinerTrainConfig, config, list(overrides or []))
    files = train_refiner(cfg, log=typer.echo)
    typer.echo(f"weights: {files.best}")
