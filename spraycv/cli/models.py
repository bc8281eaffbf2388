"""Loading the model a command runs: one message for a missing or broken weights file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from spraycv.cli.errors import bad_request, one_line

if TYPE_CHECKING:
    from spraycv.runtime.predictor import Predictor


def load_model(weights: str | Path | None, device: str = "cpu") -> Predictor:
    """The predictor for `--weights` (None: the shipped model); a bad request (exit 2) when
    the file is missing or cannot be loaded."""
    from spraycv.paths import default_weights
    from spraycv.runtime.predictor import load_predictor

    path = Path(weights) if weights is not None else default_weights()
    if weights is None and not path.is_file():  # the hint only when no file was named
        hint = "no model is shipped yet: train one, or pass --weights"
        raise bad_request(f"cannot load the model: {path}: no such file ({hint})")
    try:
        return load_predictor(path, device)  # an unknown suffix: the valid ones are listed
    except (ValueError, FileNotFoundError) as exc:  # ModelLoadError, CheckpointError
        raise bad_request(f"cannot load the model: {one_line(exc)}") from None
