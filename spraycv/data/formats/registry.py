"""Format names -> loaders, format detection and the one entry point `load_samples`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from types import MappingProxyType

from spraycv.data.formats._common import json_kind, read_json
from spraycv.data.formats.coco import load_coco
from spraycv.data.formats.folder import is_folder_layout, load_folder
from spraycv.data.formats.labelme import load_labelme
from spraycv.data.sample import DataError, Sample

Loader = Callable[..., list[Sample]]  # loader(path, *, labels=None) -> samples

# Read-only: the table is a constant, not a plug-in point that code mutates at run time.
FORMATS: Mapping[str, Loader] = MappingProxyType(
    {"folder": load_folder, "coco": load_coco, "labelme": load_labelme}
)
AUTO = "auto"


def format_names() -> tuple[str, ...]:
    """Valid values of `fmt`: "auto" and the format names."""
    return (AUTO, *FORMATS)


def _json_format(path: Path) -> str | None:
    try:
        return json_kind(read_json(path))
    except DataError:
        return None  # malformed: the loader reports it


def detect_format(path: str | Path) -> str:
    """Name of the format of a data set file or folder.

    A .json file is COCO if it has 'images' and 'annotations', LabelMe if it has 'shapes'.
    A folder is "folder" if it holds images/ + masks/ or flat *_mask files, else the kind of its
    first recognisable JSON file (also looked for in annotations/), else "folder" if it
    holds images at all (their masks are then reported missing).
    """
    path = Path(path)
    valid = ", ".join(FORMATS)
    if path.is_file():
        kind = _json_format(path) if path.suffix.lower() == ".json" else None
        if kind is None:
            read_json(path)  # raises the malformed-JSON error, if that is the cause
            raise DataError(f"{path}: not a COCO or LabelMe JSON file; valid formats: {valid}")
        return kind
    if not path.is_dir():
        raise DataError(f"{path}: no such file or folder")
    if is_folder_layout(path):
        return "folder"
    for json_path in sorted(path.glob("*.json")) + sorted(path.glob("annotations/*.json")):
        if kind := _json_format(json_path):
            return kind
    if any(path.glob("*.json")):  # only malformed JSON: let the LabelMe reader report each
        return "labelme"
    try:
        load_folder(path)
    except DataError:
        raise DataError(
            f"{path}: empty folder: found no images, masks or annotation files "
            f"(valid formats: {valid})"
        ) from None
    return "folder"


def load_samples(
    path: str | Path, fmt: str = AUTO, *, labels: Collection[str] | None = None
) -> list[Sample]:
    """Samples of a data set in format `fmt` ("auto" detects it; see `FORMATS`).

    `labels` keeps only the named COCO categories / LabelMe labels (None: all of them).
    """
    if fmt != AUTO and fmt not in FORMATS:
        raise DataError(f"unknown format {fmt!r}; valid: {', '.join(format_names())}")
    name = detect_format(path) if fmt == AUTO else fmt
    return FORMATS[name](Path(path), labels=labels)
