"""Store a source's scale in a YAML config: `sources:` is a list of mappings with a `name`."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import yaml

from spraycv.calibration.scale import CalibrationError


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{path}: cannot read the config ({exc})") from None
    except yaml.YAMLError as exc:
        raise CalibrationError(f"{path}: malformed YAML ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CalibrationError(f"{path}: the top level must be a mapping of sections")
    return data


def write_source_scale(path: str | Path, source: str, mm_per_px: float) -> bool:
    """Set `mm_per_px` of the entry named `source` under the config's top-level `sources:`.

    The entry is created if missing (and the list, and the file); its other keys and the
    rest of the file are kept, in their order. The file is rewritten by PyYAML, so comments
    are not kept.

    Parameters
    ----------
    path : str or Path
        The YAML config file.
    source : str
        The `name` of the source entry.
    mm_per_px : float
        The scale to store (> 0).

    Returns
    -------
    bool
        True if the entry was created, False if an existing one was updated.

    Raises
    ------
    CalibrationError
        (a ValueError) for an unreadable or malformed file, a `sources` that is not a list
        of mappings, an empty source name or a scale that is not a finite number > 0.
    """
    path = Path(path)
    if not str(source).strip():
        raise CalibrationError("the source name must not be empty")
    if not (math.isfinite(mm_per_px) and mm_per_px > 0):
        raise CalibrationError(f"mm_per_px must be a finite number > 0; got {mm_per_px!r}")
    data = _load(path)
    sources = data.setdefault("sources", [])
    if sources is None:
        sources = data["sources"] = []
    if not isinstance(sources, list) or not all(isinstance(s, dict) for s in sources):
        raise CalibrationError(f"{path}: 'sources' must be a list of mappings with a 'name'")
    entry = next((s for s in sources if str(s.get("name")) == source), None)
    created = entry is None
    if entry is None:
        entry = {"name": source}
        sources.append(entry)
    entry["mm_per_px"] = float(mm_per_px)
    # Write beside and rename: an interrupted run never leaves half a config behind.
    tmp = path.with_name(f".{path.name}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)
    return created
