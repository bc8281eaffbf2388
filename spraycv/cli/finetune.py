"""`spraycv finetune`: adapt the shipped model to your own labelled nozzle photos."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from spraycv.cli.errors import ExitCode, bad_request, exits
from spraycv.config.finetune import FinetuneConfig  # light: pydantic only

if TYPE_CHECKING:
    from spraycv.training.finetune import FinetuneResult


def _default(name: str) -> str:
    """The help suffix ' (default: X)', X read from the schema: no default restated here."""
    field = FinetuneConfig.model_fields[name]
    value = field.get_default(call_default_factory=True)
    return f" (default: {value})"


def _refuse_both(options: dict[str, Any]) -> None:
    """Raise a bad request where two options that exclude each other are both given."""
    exclusive = (("--holdout", "holdout", "--holdout-fraction", "holdout_fraction"),)
    exclusive += (("--epochs", "epochs", "--steps", "steps"),)
    for name_a, key_a, name_b, key_b in exclusive:
        if options[key_a] is not None and options[key_b] is not None:
            raise bad_request(f"give {name_a} or {name_b}, not both")


def _finetune_config(
    config: Path | None, overrides: list[str] | None, options: dict[str, Any]
) -> FinetuneConfig:
    """The fine-tune config: the YAML file and overrides, then the options given."""
    from spraycv.config.loader import load_config

    cfg = load_config(FinetuneConfig, config, list(overrides or []))
    for key, value in options.items():
        if value is not None:
            setattr(cfg, key, value)  # validated on assignment
    return cfg


def _print_result(cfg: FinetuneConfig, result: FinetuneResult) -> None:
    """Print what was trained on, the held-out table, a warning if worse, and the files."""
    from spraycv.training.finetune import format_table, worse_warning

    counts = result.counts
    typer.echo(
        f"fine-tuned {cfg.weights} on {counts['user_train']} of your images + "
        f"{counts['synthetic']} rendered, {counts['steps']} steps"
        + (f"; apex head re-fitted on {counts['apex_views']} views" if counts["apex_views"] else "")
    )
    typer.echo(format_table(result.before, result.after))
    warning = worse_warning(result.before, result.after)
    if warning:
        typer.echo(warning, err=True)
    typer.echo(f"weights: {result.weights}")
    if result.refiner is not None:
        typer.echo(f"refiner: {result.refiner} (the start model's, copied beside it)")


@exits(((ValueError, FileNotFoundError, FileExistsError), ExitCode.BAD_REQUEST))
def finetune(
    overrides: list[str] = typer.Argument(
        None, help="Fine-tune config overrides, e.g. batch_size=4 optim.lr=1e-3 threads=1"
    ),
    weights: Path | None = typer.Option(
        None, help="Start checkpoint (.safetensors + .json)." + _default("weights")
    ),
    data: Path | None = typer.Option(
        None, help="Your labelled images: image+mask folder, COCO or LabelMe."
    ),
    data_format: str | None = typer.Option(
        None, "--format", help="auto | folder | coco | labelme." + _default("data_format")
    ),
    synthetic: Path | None = typer.Option(
        None, help="Rendered dataset folder to mix in (default: render a few on the fly)."
    ),
    mix_ratio: float | None = typer.Option(
        None, help="Share of rendered training images." + _default("mix_ratio")
    ),
    holdout_fraction: float | None = typer.Option(
        None,
        help="Share of --data held out for the before/after comparison."
        + _default("holdout_fraction"),
    ),
    holdout: Path | None = typer.Option(None, help="A separate labelled held-out set."),
    epochs: int | None = typer.Option(None, help="Training epochs." + _default("epochs")),
    steps: int | None = typer.Option(None, help="Optimiser steps in all (instead of epochs)."),
    out: Path | None = typer.Option(
        None, help="The new checkpoint (.safetensors)." + _default("out")
    ),
    config: Path | None = typer.Option(None, "--config", "-c", help="Fine-tune YAML config."),
    quiet: bool = typer.Option(False, help="No progress bars."),
) -> None:
    """Fine-tune a trained model on your labelled images mixed with rendered ones.

    Scores the start model and the fine-tuned one on your held-out images (mask IoU, and
    the cone-angle error against the geometry on your label masks; with the start model's
    refiner, which is copied beside the new checkpoint), prints both, and writes the new
    checkpoint with a sidecar that records where it came from.
    """
    from spraycv.training.finetune import finetune as run_finetune

    options: dict[str, Any] = {
        "weights": weights,
        "data": data,
        "data_format": data_format,
        "synthetic": synthetic,
        "mix_ratio": mix_ratio,
        "holdout_fraction": holdout_fraction,
        "holdout": holdout,
        "epochs": epochs,
        "steps": steps,
        "out": out,
    }
    _refuse_both(options)
    cfg = _finetune_config(config, overrides, options)
    result = run_finetune(cfg, progress=not quiet)
    _print_result(cfg, result)
