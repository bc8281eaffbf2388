"""`ExportJob`: what `export_model` hands to a format's exporter (the table's `exporter`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spraycv.formats import FlagValue

# A format's exporter: writes job.out and returns (the path written, its precision), the
# precision being a key of spraycv.export.parity.TOLERANCES ("fp32", "fp16" or "int8").
Exporter = Callable[["ExportJob"], tuple[Path, str]]


@dataclass
class ExportJob:
    """One export request, checked and loaded.

    model, meta: the checkpoint's torch module and sidecar; size_multiple: what H and W must
        be a multiple of for its architecture.
    flags: every format flag by name, the defaults filled in.
    images: the rendered parity images (image_size square; every second one 16:9 for a model
        that keeps the aspect), which the exporter may also use to choose a recipe.
    notes: lines the exporter adds for the user (printed after the export).
    """

    weights: Path
    out: Path
    model: Any
    meta: dict[str, Any]
    size_multiple: int
    flags: dict[str, FlagValue]
    images: list[np.ndarray]
    image_size: int
    opset: int
    log: Callable[[str], None]
    notes: list[str] = field(default_factory=list)
