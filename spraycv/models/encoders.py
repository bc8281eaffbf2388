"""Encoder names that segmentation-models-pytorch has deprecated, and what replaces them.

smp deprecates its `timm-` encoders in favour of `tu-` (timm universal) ones. Its
`timm-mobilenetv3_*` encoders always wrapped timm's TensorFlow ports, `tf_mobilenetv3_*`
('SAME' padding, BatchNorm eps 1e-3), under `encoder.model.`; `tu-tf_mobilenetv3_*` builds
those same modules under the same names. So a checkpoint converts by renaming its encoder
alone: every weight keeps its key, and the logits stay the same (tests/models/test_encoders.py).

The look-alike `tu-mobilenetv3_*` is not a replacement: same keys, shapes, channels and
strides, but symmetric padding and eps 1e-5, so the same weights give other logits.

This module is the one place that knows the mapping: configs refuse deprecated names with the
replacement in the message, and checkpoint sidecars are upgraded on load.
"""

from __future__ import annotations

import copy
from typing import Any

DEPRECATED_PREFIX = "timm-"

_MOBILENETV3_VARIANTS = (
    "large_075",
    "large_100",
    "large_minimal_100",
    "small_075",
    "small_100",
    "small_minimal_100",
)

# old smp name -> the `tu-` encoder that builds the same network with the same weight keys
ENCODER_REPLACEMENTS: dict[str, str] = {
    f"timm-mobilenetv3_{variant}": f"tu-tf_mobilenetv3_{variant}"
    for variant in _MOBILENETV3_VARIANTS
}


class DeprecatedEncoderError(ValueError):
    """An smp `timm-` encoder name, with the fix in the message."""


def is_deprecated_encoder(name: str) -> bool:
    """True for the smp encoder names that warn and are due for removal."""
    return name.startswith(DEPRECATED_PREFIX)


def deprecation_message(name: str) -> str:
    """One line: why `name` is refused and what to use instead."""
    replacement = ENCODER_REPLACEMENTS.get(name)
    if replacement is not None:
        return (
            f"encoder {name!r} is deprecated by segmentation-models-pytorch; use "
            f"{replacement!r}, the same network (its checkpoints load unchanged)"
        )
    return (
        f"encoder {name!r} is deprecated by segmentation-models-pytorch and spraycv has no "
        "tested conversion for it; retrain with a `tu-` (timm universal) encoder"
    )


def require_current_encoder(name: str) -> str:
    """`name` if smp does not deprecate it; else DeprecatedEncoderError naming the fix."""
    if is_deprecated_encoder(name):
        raise DeprecatedEncoderError(deprecation_message(name))
    return name


def current_encoder(name: str) -> str:
    """The non-deprecated name of `name`'s network; DeprecatedEncoderError if there is none."""
    if name in ENCODER_REPLACEMENTS:
        return ENCODER_REPLACEMENTS[name]
    return require_current_encoder(name)


def upgrade_checkpoint_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A copy of a checkpoint sidecar with its encoder names replaced by current ones.

    Both the model and the recorded training config are renamed, so that a checkpoint
    derived from this one (fine-tuned, with an apex head, shipped) names the current encoder.
    The weights need no change: see the module docstring. A deprecated encoder without a
    replacement raises DeprecatedEncoderError.
    """
    upgraded = copy.deepcopy(meta)
    model = upgraded.get("model")
    if isinstance(model, dict) and isinstance(model.get("encoder"), str):
        old = model["encoder"]
        model["encoder"] = current_encoder(old)
        if model["encoder"] != old:
            upgraded["encoder_converted_from"] = old
    trained = (upgraded.get("train_config") or {}).get("model")
    if isinstance(trained, dict) and trained.get("encoder") in ENCODER_REPLACEMENTS:
        trained["encoder"] = ENCODER_REPLACEMENTS[trained["encoder"]]
    return upgraded
