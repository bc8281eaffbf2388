"""LabelMe JSON: read polygon/rectangle/circle/mask shapes as one spray mask, and write files.

Coordinates are (x, y) with pixel centres at integers, as LabelMe itself rasterises them:
pixels the outline touches belong to the shape.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Collection, Sequence
from functools import partial
from pathlib import Path

import cv2
import numpy as np

from spraycv.data.formats._common import (
    as_points,
    fill_circle,
    fill_polygons,
    json_kind,
    read_json,
)
from spraycv.data.sample import DataError, Sample

AREA_SHAPES = ("polygon", "rectangle", "circle", "mask")
IGNORED_SHAPES = ("point", "points", "line", "linestrip")  # no area: not part of the mask
LABELME_VERSION = "5.5.0"


def _shape_mask(shape: tuple[int, int], item: dict) -> np.ndarray | None:
    """One LabelMe shape -> (H, W) uint8 {0, 1}, or None for shapes without area."""
    kind = item.get("shape_type") or "polygon"  # LabelMe 3 files may omit it
    if kind in IGNORED_SHAPES:
        return None
    if kind not in AREA_SHAPES:
        valid = ", ".join(AREA_SHAPES + IGNORED_SHAPES)
        raise DataError(f"unknown shape_type {kind!r}; valid: {valid}")
    pts = as_points(item.get("points", []))
    if kind == "polygon":
        return fill_polygons(shape, [pts])
    if len(pts) != 2:
        raise DataError(f"{kind} needs 2 points, got {len(pts)}")
    mask = np.zeros(shape, dtype=np.uint8)
    if kind == "rectangle":
        (x0, y0), (x1, y1) = pts
        return fill_polygons(shape, [np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])])
    if kind == "circle":
        fill_circle(mask, pts[0], float(np.hypot(*(pts[1] - pts[0]))))
        return mask
    # "mask": a base64 PNG covering the box points[0]..points[1] (inclusive, integer corners)
    patch = _decode_image(item.get("mask"), cv2.IMREAD_GRAYSCALE, "mask shape")
    x0, y0 = (int(v) for v in pts[0])
    h, w = patch.shape
    ys, xs = slice(max(y0, 0), min(y0 + h, shape[0])), slice(max(x0, 0), min(x0 + w, shape[1]))
    mask[ys, xs] = patch[ys.start - y0 : ys.stop - y0, xs.start - x0 : xs.stop - x0] > 0
    return mask


def _decode_image(text: object, flags: int, what: str) -> np.ndarray:
    try:
        raw = base64.b64decode(str(text), validate=True)
    except (binascii.Error, ValueError):
        raise DataError(f"{what}: not valid base64") from None
    image = cv2.imdecode(np.frombuffer(raw, np.uint8), flags)
    if image is None:
        raise DataError(f"{what}: base64 data is not a readable image")
    return image


def _labelme_mask(
    shape: tuple[int, int],
    shapes: tuple[dict, ...],
    labels: frozenset[str] | None,
    declared: tuple[int, int] | None,
    where: str,
) -> np.ndarray:
    """OR the shapes of one file into a mask (MaskFn for `Sample`)."""
    if declared is not None and declared != tuple(shape):
        raise DataError(
            f"mask/image size mismatch: {where} declares {declared[1]}x{declared[0]} but the "
            f"image is {shape[1]}x{shape[0]} (W x H)"
        )
    mask = np.zeros(shape, dtype=np.uint8)
    for i, item in enumerate(shapes):
        if not isinstance(item, dict):
            raise DataError(f"{where}: shapes[{i}] is not an object")
        if labels is not None and str(item.get("label")) not in labels:
            continue
        try:
            part = _shape_mask(shape, item)
        except DataError as exc:
            raise DataError(f"{where}: shapes[{i}] ({item.get('label')!r}): {exc}") from None
        if part is not None:
            mask |= part
    return mask


def _sample(json_path: Path, labels: frozenset[str] | None) -> Sample | None:
    """Index one LabelMe file: None if it is other JSON, and a broken file becomes a sample
    whose `load()` says why."""
    sample_id = json_path.stem
    try:
        data = read_json(json_path)
        if json_kind(data) != "labelme" or not isinstance(data, dict):
            return None
        shapes = data.get("shapes", [])
        if not isinstance(shapes, list):
            raise DataError(f"{json_path}: 'shapes' must be a list")
        rel = str(data.get("imagePath") or "").replace("\\", "/")  # Windows-made files
        image_path = (json_path.parent / rel) if rel else json_path  # json: embedded image
        if rel and not image_path.is_file() and (json_path.parent / Path(rel).name).is_file():
            image_path = json_path.parent / Path(rel).name  # moved next to its JSON
        image_bytes = None
        if data.get("imageData"):
            try:
                image_bytes = base64.b64decode(str(data["imageData"]), validate=True)
            except (binascii.Error, ValueError):
                raise DataError(f"{json_path}: imageData is not valid base64") from None
        elif not rel:
            raise DataError(f"{json_path}: neither imagePath nor imageData is set")
        h, w = data.get("imageHeight"), data.get("imageWidth")
        declared = (int(h), int(w)) if h and w else None
    except DataError as exc:
        return Sample(id=sample_id, image_path=json_path, defect=str(exc))
    fn = partial(
        _labelme_mask, shapes=tuple(shapes), labels=labels, declared=declared, where=str(json_path)
    )
    return Sample(id=sample_id, image_path=image_path, mask_fn=fn, image_bytes=image_bytes)


def load_labelme(path: str | Path, *, labels: Collection[str] | None = None) -> list[Sample]:
    """Samples of one LabelMe JSON file or of every LabelMe JSON in a folder (not recursive).

    `labels` keeps only shapes with these labels. Other JSON files in the folder (valid JSON
    that is not LabelMe) are skipped; malformed ones are kept so that `check` reports them.
    """
    path = Path(path)
    wanted = frozenset(str(v) for v in labels) if labels else None
    if path.is_file():
        if (sample := _sample(path, wanted)) is None:
            raise DataError(f"{path}: not a LabelMe file (no 'shapes' or 'imagePath')")
        return [sample]
    if not path.is_dir():
        raise DataError(f"{path}: no such file or folder")
    found = (_sample(json_path, wanted) for json_path in sorted(path.glob("*.json")))
    samples = [s for s in found if s is not None]
    if not samples:
        raise DataError(f"{path}: empty folder: no LabelMe JSON files found")
    return samples


def mask_to_polygons(
    mask: np.ndarray, tolerance_px: float = 1.0, min_area_px: float = 4.0, *, holes: bool = True
) -> list[np.ndarray]:
    """Outlines of a mask's regions, one polygon per region, largest first.

    LabelMe polygons cannot have holes, so each hole is spliced into its region's outline
    by a zero-width vertical cut through spray pixels (a "keyhole"): filled the LabelMe way
    (`fill_polygons`), the polygon gives back the region with its holes.

    Args:
        mask: (H, W) array, non-zero = spray.
        tolerance_px: max distance of the simplified outline from the traced one
            (Douglas-Peucker); 0 keeps the pixel outline exactly (only vertices in the
            middle of straight runs are dropped), so the mask fills back unchanged.
        min_area_px: regions (and holes) whose outline encloses less are dropped (specks
            and pinholes).
        holes: cut holes into the outlines; False gives the outer outlines only.

    Returns:
        list of (N, 2) float64 (x, y) vertex arrays, N >= 3.
    """
    binary = (np.asarray(mask) > 0).astype(np.uint8)
    mode = cv2.RETR_CCOMP if holes else cv2.RETR_EXTERNAL  # CCOMP: regions and their holes
    contours, hierarchy = cv2.findContours(binary, mode, cv2.CHAIN_APPROX_NONE)
    if hierarchy is None:
        return []
    links = hierarchy[0]  # per contour: (next, previous, first child, parent)

    def kept(i: int) -> bool:
        return len(contours[i]) >= 3 and cv2.contourArea(contours[i]) >= min_area_px

    polygons = []
    outers = [i for i in range(len(contours)) if links[i][3] < 0 and kept(i)]
    for i in sorted(outers, key=lambda i: cv2.contourArea(contours[i]), reverse=True):
        ring = contours[i].reshape(-1, 2)
        child, cuts = links[i][2], []
        while child >= 0:
            if kept(child):
                cuts.append(contours[child].reshape(-1, 2))
            child = links[child][0]
        ring = _splice_holes(ring, cuts)
        if tolerance_px > 0:
            ring = cv2.approxPolyDP(ring.reshape(-1, 1, 2), tolerance_px, closed=True)
            ring = ring.reshape(-1, 2)
        else:
            ring = _drop_collinear(ring)
        if len(ring) >= 3:
            polygons.append(ring.astype(np.float64))
    return polygons


def _splice_holes(outer: np.ndarray, holes: list[np.ndarray]) -> np.ndarray:
    """Join hole outlines into an outer outline by vertical cuts; (N, 2) int32 (x, y).

    Each hole is entered at its topmost (then leftmost) pixel from the nearest outline
    vertex straight above it. Above a hole's top pixel the column is spray up to a pixel
    that borders the outside or a higher hole, and both are already in the outline (holes
    go top first), so the cut only crosses spray pixels and the fill is unchanged.
    """
    ring = outer.astype(np.int32)
    for hole in sorted(holes, key=lambda h: int(h[:, 1].min())):
        top = int(np.lexsort((hole[:, 0], hole[:, 1]))[0])
        x, y = hole[top]
        above = np.flatnonzero((ring[:, 0] == x) & (ring[:, 1] <= y))
        if above.size:
            k = int(above[np.argmax(ring[above, 1])])
        else:  # not expected (see above); the nearest vertex keeps the polygon valid
            k = int(np.argmin(np.hypot(*(ring - hole[top]).T)))
        loop = np.roll(hole, -top, axis=0).astype(np.int32)
        ring = np.concatenate([ring[: k + 1], loop, loop[:1], ring[k:]])
    return ring


def _drop_collinear(ring: np.ndarray) -> np.ndarray:
    """Drop repeated vertices and those in the middle of a straight run (lossless)."""
    ring = ring[np.any(ring != np.roll(ring, 1, axis=0), axis=1)]  # repeats (zero-length cuts)
    d_in = ring - np.roll(ring, 1, axis=0)
    d_out = np.roll(ring, -1, axis=0) - ring
    cross = d_in[:, 0] * d_out[:, 1] - d_in[:, 1] * d_out[:, 0]
    straight = (cross == 0) & (np.sum(d_in * d_out, axis=1) > 0)  # a cut's tip turns back
    return ring[~straight]


def write_labelme(
    json_path: str | Path,
    image_path: str | Path,
    polygons: Sequence[np.ndarray],
    image_size: tuple[int, int],
    label: str = "spray",
    *,
    embed_image: bool = False,
) -> dict:
    """Write a LabelMe 5.x JSON file with one polygon shape per polygon.

    Args:
        json_path: file to write (its folder is created).
        image_path: the image; stored relative to the JSON's folder.
        polygons: (N, 2) (x, y) arrays with N >= 3, e.g. from `mask_to_polygons`.
        image_size: (H, W) of the image.
        label: the label of every shape.
        embed_image: also store the image file's bytes as base64 `imageData`.

    Returns:
        The written JSON content.
    """
    json_path, image_path = Path(json_path), Path(image_path)
    shapes = []
    for i, poly in enumerate(polygons):
        pts = as_points(poly)
        if len(pts) < 3:
            raise DataError(f"polygon {i} has {len(pts)} points (needs at least 3)")
        shapes.append(
            {
                "label": label,
                "points": np.round(pts, 2).tolist(),
                "group_id": None,
                "description": "",
                "shape_type": "polygon",
                "flags": {},
                "mask": None,
            }
        )
    rel = os.path.relpath(image_path.resolve(), json_path.parent.resolve())
    image_data = base64.b64encode(image_path.read_bytes()).decode() if embed_image else None
    content = {
        "version": LABELME_VERSION,
        "flags": {},
        "shapes": shapes,
        "imagePath": Path(rel).as_posix(),
        "imageData": image_data,
        "imageHeight": int(image_size[0]),
        "imageWidth": int(image_size[1]),
    }
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    return content
