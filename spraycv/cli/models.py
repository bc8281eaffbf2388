"""Loading the model a command runs: one message for a missing or broken weights file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from spraycv.cli.errors import bad_request, one_line

if TYPE_CHECKING:
    from spraycv.measure import Measurer
    from spraycv.runtime.predictor import Predictor


def _model_path(weights: str | Path | None) -> Path:
    """`--weights`, or the shipped model; a bad request when neither file exists."""
    from spraycv.paths import default_weights

    path = Path(weights) if weights is not None else default_weights()
    if weights is None and not path.is_file():  # the hint only when no file was named
        hint = "no model is shipped yet: train one, or pass --weights"
        raise bad_request(f"cannot load the model: {path}: no such file ({hint})")
    return path


def load_model(weights: str | Path | None, device: str = "cpu") -> Predictor:
    """The predictor for `--weights` (None: the shipped model); a bad request (exit 2) when
    the file is missing or cannot be loaded."""
    from spraycv.runtime.predictor import load_predictor

    try:
        return load_predictor(_model_path(weights), device)  # a bad suffix lists the valid
    except (ValueError, FileNotFoundError) as exc:  # ModelLoadError, CheckpointError
        raise bad_request(f"cannot load the model: {one_line(exc)}") from None


def load_pipeline(weights: str | Path | None, device: str = "cpu", refine: bool = True) -> Measurer:
    """The model's whole pipeline (spraycv.measure.load_measurer: with the refiner stored
    beside it), with load_model's errors."""
    from spraycv.measure import load_measurer

    try:
        return load_measurer(_model_path(weights), refine=refine, device=device)
    except (ValueError, FileNotFoundError) as exc:
        raise bad_request(f"cannot load the model: {one_line(exc)}") from None
