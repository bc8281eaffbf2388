"""Where the shipped files live: the default model and the bundled samples."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
WEIGHTS_DIR = REPO_ROOT / "weights"
SAMPLES_DIR = REPO_ROOT / "data" / "samples"


def default_weights() -> Path:
    """The shipped default model (`$SPRAYCV_WEIGHTS` overrides it)."""
    return Path(os.environ.get("SPRAYCV_WEIGHTS", WEIGHTS_DIR / "default.safetensors"))
