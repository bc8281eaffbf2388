"""Helpers shared by the format readers: JSON reading and polygon rasterisation."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np

from spraycv.data.sample import DataError

_SHIFT = 4  # cv2 fixed-point bits: vertices keep 1/16 px precision
_MAX_COORD = 1e6  # beyond this the fixed-point int32 coordinates would overflow


def read_json(path: Path) -> object:
    """Parse a JSON file, with errors that name the file and the position."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{path}: malformed JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: unreadable JSON file ({exc})") from None


def json_kind(data: object) -> str | None:
    """'coco', 'labelme' or None for parsed JSON content."""
    if isinstance(data, dict):
        if "images" in data and "annotations" in data:
            return "coco"
        if "shapes" in data or "imagePath" in data:
            return "labelme"
    return None


def as_points(points: object) -> np.ndarray:
    """[[x, y], ...] or a flat [x1, y1, x2, y2, ...] list -> (N, 2) float64 array."""
    try:
        arr = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("points are not numbers") from None
    if arr.ndim == 1 and arr.size % 2 == 0:
        arr = arr.reshape(-1, 2)
    if arr.ndim != 2 or arr.shape[1] != 2 or not np.isfinite(arr).all():
        raise DataError("points must be finite (x, y) pairs")
    return arr


def fill_polygons(shape: tuple[int, int], polygons: Iterable[np.ndarray]) -> np.ndarray:
    """OR the filled polygons into one (H, W) uint8 {0, 1} mask.

    Each polygon is an (N, 2) array of (x, y) with pixel centres at integer coordinates.
    Like LabelMe's own rasteriser, pixels the outline touches are included, so a contour
    traced by `cv2.findContours` fills back to the same pixels. Polygons are drawn one by
    one: a single `cv2.fillPoly` call would cut overlaps out as holes.
    """
    mask = np.zeros(shape, dtype=np.uint8)
    for i, poly in enumerate(polygons):
        if len(poly) < 3:
            raise DataError(f"polygon {i} has {len(poly)} points (needs at least 3)")
        if np.abs(poly).max() > _MAX_COORD:
            raise DataError(f"polygon {i} has coordinates beyond +-{_MAX_COORD:g} px")
        fixed = np.round(np.asarray(poly) * (1 << _SHIFT)).astype(np.int32)
        cv2.fillPoly(mask, [fixed], 1, lineType=cv2.LINE_8, shift=_SHIFT)
    return mask


def fill_circle(mask: np.ndarray, center: np.ndarray, radius: float) -> None:
    """Fill a disc into an (H, W) uint8 mask in place (1/16 px precision)."""
    c = tuple(int(v) for v in np.round(center * (1 << _SHIFT)))
    r = round(radius * (1 << _SHIFT))
    cv2.circle(mask, c, r, 1, thickness=-1, lineType=cv2.LINE_8, shift=_SHIFT)
