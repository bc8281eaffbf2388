"""`spraycv eval` and `spraycv compare`: held-out metrics, plots, leaderboard, selection."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from spraycv.cli.errors import ExitCode, bad_request, exits, one_line
from spraycv.cli.models import load_pipeline
from spraycv.config.loader import ConfigError
from spraycv.io.images import ImageReadError
from spraycv.label.lines import LineTruthError

if TYPE_CHECKING:
    from spraycv.measure import Measurer


@exits(  # --data holds no truth, a bad lines.json, or a photo it names cannot be read
    (FileNotFoundError, ExitCode.BAD_REQUEST),
    (LineTruthError, ExitCode.BAD_REQUEST),
    (ImageReadError, ExitCode.BAD_REQUEST),
)
def evaluate(
    weights: str = typer.Option(..., help="A .safetensors checkpoint, or 'classical'."),
    data: Path = typer.Option(
        ...,
        help="A rendered dataset (labels.jsonl) or photos labelled by `spraycv label lines` "
        "(lines.json).",
    ),
    out: Path = typer.Option(Path("outputs/eval"), help="Where to write metrics and plots."),
    limit: int | None = typer.Option(None, help="Evaluate only the first N images."),
    refiner: Path | None = typer.Option(
        None,
        help="A near-orifice refiner (.safetensors or .onnx) in place of the one stored "
        "beside the weights.",
    ),
    refine: bool = typer.Option(
        True, help="Re-read each plume near its orifice (--no-refine: the model's mask only)."
    ),
    truth: str = typer.Option(
        "auto",
        help="Which truth to read: auto (labels.jsonl if there, else lines.json), rendered, "
        "or lines.",
    ),
) -> None:
    """Evaluate a model end to end (image -> mask -> cone angles) against ground truth.

    Writes metrics.json, frames.jsonl, angle_error_hist.png and worst_cases.png. The mask
    metrics score the pipeline's mask: the model's, each trusted plume redrawn from its
    reading (docs/cone_angle.md).

    On line truth (lines.json): angles, missed and extra plumes; mask metrics are null.
    """
    from spraycv.evaluation.heldout import evaluate_frames
    from spraycv.evaluation.plots import plot_angle_histogram, worst_cases
    from spraycv.evaluation.truth import TRUTH_CHOICES, truth_kind

    if truth not in TRUTH_CHOICES:
        raise typer.BadParameter(f"one of {', '.join(TRUTH_CHOICES)}", param_hint="--truth")
    segmenter = _pipeline(weights, refine, refiner)
    kind = truth_kind(data, truth)
    frames = kind.frames(data)[:limit]
    report = evaluate_frames(frames, segmenter)
    report.write(out)
    plot_angle_histogram(report, out / "angle_error_hist.png", title=str(weights))
    worst_cases(report, frames, segmenter, out / "worst_cases.png")
    typer.echo(json.dumps(report.summary(), indent=2))
    styles = report.by_style()
    if len(styles) > 1:  # a mixed set: each renderer style separately
        typer.echo(json.dumps(styles, indent=2))
    if kind.note:
        typer.echo(kind.note)
    typer.echo(f"written to {out}")


@exits((ConfigError, ExitCode.BAD_REQUEST))  # a bad config or --set: say which
def compare(
    configs: list[Path] = typer.Argument(..., help="Training configs (YAML) to compare."),
    test_data: Path = typer.Option(..., help="Rendered held-out dataset folder."),
    out: Path = typer.Option(Path("outputs/compare"), help="Runs, evaluations and leaderboard."),
    minutes: float | None = typer.Option(None, help="Wall-time budget per model."),
    epochs: int | None = typer.Option(None, help="Epoch budget per model."),
    override: list[str] = typer.Option([], "--set", help="key=value for every config."),
    max_latency_ms: float = typer.Option(100.0, help="Selection: CPU latency budget."),
    limit: int | None = typer.Option(None, help="Evaluate only the first N test images."),
    reuse: bool = typer.Option(False, help="Evaluate existing runs instead of retraining."),
) -> None:
    """Train each config under the same budget, evaluate all and the classical baseline on
    the same held-out set, write leaderboard.md/.csv and a plot, and select the best."""
    from spraycv.evaluation.compare import compare as run_compare
    from spraycv.evaluation.leaderboard import SelectionRule

    budget = [f"max_minutes={minutes}"] if minutes else []
    budget += [f"epochs={epochs}"] if epochs else []
    _, best, _ = run_compare(
        configs, test_data, out, budget, override, SelectionRule(max_latency_ms), limit, reuse
    )
    typer.echo((out / "leaderboard.md").read_text())
    if best is None:  # no model meets the selection rule: the leaderboard says why
        raise typer.Exit(ExitCode.INPUTS_FAILED)


def _pipeline(weights: str, refine: bool, refiner: Path | None) -> Measurer:
    """The pipeline evaluated: the model's own (with the refiner beside it), the classical
    segmenter, or the model with another refiner."""
    from spraycv.measure import Measurer

    if weights == "classical":
        from spraycv.segment.classical import segment_classical

        return Measurer(segment_classical)
    pipeline = load_pipeline(weights, refine=refine and refiner is None)
    if refine and refiner is not None:
        pipeline = dataclasses.replace(pipeline, refiner=_refiner(refiner))
    return pipeline


def _refiner(weights: Path | None):
    if weights is None:
        return None
    from spraycv.refine.stage import Refiner

    try:
        return Refiner.load(weights)
    except (ValueError, FileNotFoundError) as exc:
        raise bad_request(f"cannot load the refiner: {one_line(exc)}") from None
