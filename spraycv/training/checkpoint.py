"""Checkpoints: weights as safetensors plus a JSON sidecar that says how to use them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

import spraycv
from spraycv.config.train import ModelConfig
from spraycv.formats import CHECKPOINT
from spraycv.io.sidecar import read_json_sidecar

SIDECAR_FORMAT = "spraycv-checkpoint/1"
# the precision of the weights that ship (weights/): half the size, and a float32 checkpoint
# reads a few frames differently from its shipped copy (experiments row 201), so a model is
# judged in it too (`round_to_shipped`, `copy_as_shipped`)
SHIPPED_DTYPE = torch.float16


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or does not fit its sidecar."""


def unwrap(model: nn.Module) -> nn.Module:
    """The plain module under DDP and torch.compile wrappers."""
    model = getattr(model, "module", model)
    return getattr(model, "_orig_mod", model)


def sidecar_path(weights: Path) -> Path:
    """`model.safetensors` -> `model.json`."""
    return Path(weights).with_suffix(".json")


def save_checkpoint(
    weights: Path,
    model: nn.Module,
    sidecar: dict[str, Any],
    dtype: torch.dtype | None = None,
) -> Path:
    """Write `weights` (.safetensors) and its sidecar; `dtype` (e.g. fp16) shrinks shipped files.

    The sidecar must hold `model` (a ModelConfig dump), `input_size` [H, W], `normalization`
    and `threshold`; version and time are added here.
    """
    from safetensors.torch import save_file

    for key in ("model", "input_size", "normalization", "threshold"):
        if key not in sidecar:
            raise CheckpointError(f"sidecar is missing {key!r}")
    state = {
        k: (v.to(dtype) if dtype is not None and v.is_floating_point() else v).contiguous().cpu()
        for k, v in unwrap(model).state_dict().items()
    }
    weights = Path(weights)
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp = weights.with_suffix(".tmp")
    save_file(state, str(tmp), metadata={"format": SIDECAR_FORMAT})
    tmp.replace(weights)  # atomic: a crash never leaves half a file under the real name
    # what this write is wins over the same keys of a sidecar read from another file (a
    # float32 checkpoint shipped as float16 kept saying "as trained")
    written = {
        "format": SIDECAR_FORMAT,
        "spraycv_version": spraycv.__version__,
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "weights_dtype": str(dtype or "as trained").removeprefix("torch."),
    }
    meta = {**written, **{k: v for k, v in sidecar.items() if k not in written}}
    sidecar_path(weights).write_text(json.dumps(meta, indent=2, default=str) + "\n")
    return weights


def read_stored_sidecar(weights: Path) -> dict[str, Any]:
    """The sidecar of a weights file as it is on disk (read_sidecar upgrades it)."""
    return read_json_sidecar(sidecar_path(weights), weights, SIDECAR_FORMAT, CheckpointError)


def read_sidecar(weights: Path) -> dict[str, Any]:
    """The sidecar of a weights file, validated enough to build the model.

    Checkpoints saved with an smp `timm-` encoder come back under its `tu-` replacement
    (spraycv.models.encoders); one without a tested replacement is a CheckpointError.
    """
    from spraycv.models.encoders import DeprecatedEncoderError, upgrade_checkpoint_meta

    try:
        return upgrade_checkpoint_meta(read_stored_sidecar(weights))
    except DeprecatedEncoderError as exc:
        raise CheckpointError(f"{weights}: {exc}") from None


def load_checkpoint(weights: Path, device: str | torch.device = "cpu") -> tuple[nn.Module, dict]:
    """Build the model its sidecar describes and load the weights (in float32, eval mode)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from spraycv.models.registry import create_model

    weights = Path(weights)
    if not weights.is_file():
        raise CheckpointError(f"weights file not found: {weights}")
    if weights.suffix != CHECKPOINT.suffix:  # an export measures; training starts from weights
        raise CheckpointError(
            f"{weights}: not a {CHECKPOINT.suffix} checkpoint (an exported model only "
            f"measures: start from the checkpoint it was exported from)"
        )
    meta = read_sidecar(weights)
    model = create_model(ModelConfig.model_validate(meta["model"]))
    try:
        state = load_file(str(weights), device="cpu")
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(f"{weights}: corrupt or truncated safetensors file ({exc})") from None
    state = {k: v.float() if v.is_floating_point() else v for k, v in state.items()}
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise CheckpointError(f"{weights}: weights do not fit {meta['model']}: {exc}") from None
    return model.to(device).eval(), meta


def upgrade_checkpoint(weights: Path, out: Path | None = None) -> str | None:
    """Rewrite a checkpoint saved with a deprecated smp encoder under its replacement.

    It goes through load_checkpoint, so files are converted by the same mapping as on load;
    the stored float dtype and the rest of the sidecar are kept. `out` defaults to `weights`
    (in place). Returns the encoder name replaced, or None for a current checkpoint, which
    is left untouched.
    """
    from safetensors.torch import load_file

    from spraycv.models.encoders import is_deprecated_encoder

    weights = Path(weights)
    old = str((read_stored_sidecar(weights).get("model") or {}).get("encoder", ""))
    if not is_deprecated_encoder(old):
        return None
    model, meta = load_checkpoint(weights)
    dtypes = {v.dtype for v in load_file(str(weights)).values() if v.is_floating_point()}
    if len(dtypes) != 1:  # save_checkpoint writes one float dtype; anything else is foreign
        raise CheckpointError(f"{weights}: mixed float dtypes {sorted(map(str, dtypes))}")
    save_checkpoint(out or weights, model, meta, dtypes.pop())
    return old


def round_to_shipped(model: nn.Module) -> nn.Module:
    """`model` (in place) with every floating weight and buffer rounded to SHIPPED_DTYPE and
    back: it then reads as its shipped file, loaded in float32, will."""
    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            if tensor.is_floating_point():
                tensor.copy_(tensor.to(SHIPPED_DTYPE))
    return model


def copy_as_shipped(weights: Path, out: Path) -> Path:
    """A copy of a checkpoint and its sidecar at `out`, in SHIPPED_DTYPE."""
    model, meta = load_checkpoint(weights)
    return save_checkpoint(out, model, dict(meta), SHIPPED_DTYPE)
