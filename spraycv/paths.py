"""Where the shipped files live: the default model and the bundled samples."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
WEIGHTS_DIR = REPO_ROOT / "weights"
SAMPLES_DIR = REPO_ROOT / "data" / "samples"
# The trained model: what `spraycv export`, `finetune`, `apex-head` and `bench` start from.
SHIPPED_CHECKPOINT = WEIGHTS_DIR / "default.safetensors"
# Its FP32 ONNX export (and the refiner's, beside it), which measures: the same figures
# (parity 3e-5 in logits, every mask and angle equal), twice the speed and without torch in
# the process, a third of the memory (docs/benchmarks.md). scripts/ship_model.py writes it;
# tests/export/test_shipped_export.py holds it to the checkpoint.
SHIPPED_MODEL = WEIGHTS_DIR / "default.onnx"
ENV_WEIGHTS = "SPRAYCV_WEIGHTS"  # another model file to measure with by default


def default_weights() -> Path:
    """The model that measures by default (`$SPRAYCV_WEIGHTS` overrides it)."""
    return Path(os.environ.get(ENV_WEIGHTS, SHIPPED_MODEL))


def default_checkpoint() -> Path:
    """The trained model that exports, fine-tuning and benchmarks start from."""
    return SHIPPED_CHECKPOINT
