"""JSON sidecars next to model files: read and check them with one message style."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json_sidecar(
    path: Path, owner: Path, expected_format: str, error: type[Exception]
) -> dict[str, Any]:
    """The sidecar at `path` describing `owner`, raising `error` with a clear message.

    The sidecar must be a JSON object whose "format" field equals `expected_format`.
    """
    if not path.is_file():
        raise error(f"{owner}: sidecar {path.name} not found next to it")
    try:
        meta = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != expected_format:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise error(f"{path}: not a spraycv sidecar of format {expected_format} (found {found!r})")
    return meta
