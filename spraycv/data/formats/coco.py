"""COCO instance annotations: polygons and RLE, all OR-ed into one spray mask per image.

RLE is decoded here in numpy (no pycocotools): runs alternate background/foreground,
starting with background, over the image in column-major order. Compressed RLE strings use
the COCO LEB128-like encoding (6 bits a character, offset 48; from the third count on each
value is stored as the difference to the count two places before).
"""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from pathlib import Path

import numpy as np

from spraycv.data.formats._common import as_points, fill_polygons, json_kind, read_json
from spraycv.data.sample import DataError, Sample


def decode_rle_string(text: str) -> list[int]:
    """Compressed COCO RLE string -> run lengths."""
    counts: list[int] = []
    p = 0
    while p < len(text):
        x, k, more = 0, 0, True
        while more:
            if p >= len(text):
                raise DataError("compressed RLE string ends in the middle of a number")
            c = ord(text[p]) - 48
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p, k = p + 1, k + 1
            if not more and c & 0x10:
                x |= -1 << (5 * k)  # sign-extend
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts


def encode_rle_string(counts: list[int]) -> str:
    """Run lengths -> compressed COCO RLE string (inverse of `decode_rle_string`)."""
    chars = []
    for i, count in enumerate(counts):
        x = count - counts[i - 2] if i > 2 else count
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = x != -1 if c & 0x10 else x != 0
            chars.append(chr((c | 0x20 if more else c) + 48))
    return "".join(chars)


def rle_to_mask(rle: dict, shape: tuple[int, int] | None = None) -> np.ndarray:
    """COCO RLE {"size": [H, W], "counts": [...] or "..."} -> (H, W) uint8 {0, 1}.

    `shape`, when given, is the image's (H, W) that the RLE must match.
    """
    try:
        h, w = (int(v) for v in rle["size"])
        counts = rle["counts"]
    except (KeyError, TypeError, ValueError):
        raise DataError("RLE needs 'size': [H, W] and 'counts'") from None
    if shape is not None and (h, w) != tuple(shape):
        raise DataError(
            f"RLE size {w}x{h} does not match the image size {shape[1]}x{shape[0]} (W x H)"
        )
    if isinstance(counts, bytes):
        counts = counts.decode("ascii")
    try:
        runs = np.asarray(decode_rle_string(counts) if isinstance(counts, str) else counts)
        whole = runs.ndim == 1 and (runs.size == 0 or (runs == np.round(runs)).all())
    except (TypeError, ValueError):
        whole = False
    if not whole:
        raise DataError("RLE counts must be a list of integers or a compressed string")
    runs = runs.astype(np.int64)  # some exporters write 3.0 for 3
    if (runs < 0).any() or runs.sum() != h * w:
        raise DataError(
            f"RLE counts (sum {int(runs.sum())}) do not cover its size {w}x{h} = {h * w} pixels"
        )
    values = np.zeros(runs.size, dtype=np.uint8)
    values[1::2] = 1
    return np.ascontiguousarray(np.repeat(values, runs).reshape(w, h).T)


def mask_to_rle(mask: np.ndarray) -> dict:
    """(H, W) mask -> compressed COCO RLE {"size": [H, W], "counts": str}."""
    flat = (np.asarray(mask) > 0).T.ravel().astype(np.int8)
    edges = np.flatnonzero(np.diff(flat)) + 1
    bounds = np.concatenate([[0], edges, [flat.size]])
    runs = np.diff(bounds).tolist()
    if flat.size and flat[0]:
        runs = [0, *runs]  # runs start with background
    return {"size": list(mask.shape[:2]), "counts": encode_rle_string(runs)}


def _coco_mask(
    shape: tuple[int, int], segmentations: tuple, declared: tuple[int, int], where: str
) -> np.ndarray:
    """Rasterise one image's segmentations (MaskFn for `Sample`)."""
    if declared != tuple(shape):
        raise DataError(
            f"mask/image size mismatch: {where} declares {declared[1]}x{declared[0]} but the "
            f"image is {shape[1]}x{shape[0]} (W x H)"
        )
    mask = np.zeros(shape, dtype=np.uint8)
    for ann_id, seg in segmentations:
        try:
            if isinstance(seg, dict):
                mask |= rle_to_mask(seg, shape)
            elif isinstance(seg, list):
                mask |= fill_polygons(shape, [as_points(p) for p in seg])
            else:
                raise DataError("segmentation must be a list of polygons or an RLE dict")
        except DataError as exc:
            raise DataError(f"{where} annotation {ann_id}: {exc}") from None
    return mask


def find_coco_file(folder: Path) -> Path:
    """The one COCO JSON in `folder` or `folder/annotations`."""
    candidates = sorted(folder.glob("*.json")) + sorted(folder.glob("annotations/*.json"))
    found = []
    for path in candidates:
        try:
            if json_kind(read_json(path)) == "coco":
                found.append(path)
        except DataError:
            continue
    if not found:
        raise DataError(f"{folder}: no COCO JSON (with 'images' and 'annotations') found")
    if len(found) > 1:
        names = ", ".join(str(p) for p in found)
        raise DataError(f"{folder}: several COCO files ({names}); pass one of them")
    return found[0]


def _category_ids(data: dict, labels: Collection[str | int], where: Path) -> set[int]:
    cats = {c.get("id"): str(c.get("name", c.get("id"))) for c in data.get("categories", [])}
    wanted = {str(v) for v in labels}
    ids = {i for i, name in cats.items() if name in wanted or str(i) in wanted}
    known = {*cats.values(), *(str(i) for i in cats)}
    if unknown := sorted(wanted - known):
        valid = ", ".join(f"{n} (id {i})" for i, n in sorted(cats.items())) or "none"
        raise DataError(f"{where}: unknown categories {unknown}; valid: {valid}")
    return ids


def _resolve(file_name: str, roots: list[Path]) -> Path:
    for root in roots:
        if (root / file_name).is_file():
            return root / file_name
    return roots[0] / file_name  # reported as missing when loaded


def load_coco(
    path: str | Path,
    *,
    labels: Collection[str | int] | None = None,
    image_root: str | Path | None = None,
) -> list[Sample]:
    """Samples of a COCO file (or a folder holding one, also in `annotations/`).

    Images are looked up under `image_root`, else next to the JSON, in `images/` beside it,
    or one level up (the usual `annotations/` + `images/` layout). `labels` keeps only the
    annotations of these categories (names or ids); images without any get an empty mask.
    """
    path = Path(path)
    json_path = find_coco_file(path) if path.is_dir() else path
    data = read_json(json_path)
    if json_kind(data) != "coco":
        raise DataError(f"{json_path}: not a COCO file (needs 'images' and 'annotations')")
    assert isinstance(data, dict)
    keep = _category_ids(data, labels, json_path) if labels else None
    base = json_path.parent
    roots = [Path(image_root)] if image_root else [base, base / "images", base.parent]
    roots += [] if image_root else [base.parent / "images"]

    by_image: dict[object, list] = {}
    for i, ann in enumerate(data["annotations"]):
        if not isinstance(ann, dict) or "image_id" not in ann or "segmentation" not in ann:
            raise DataError(f"{json_path}: annotations[{i}] needs 'image_id' and 'segmentation'")
        if keep is None or ann.get("category_id") in keep:
            by_image.setdefault(ann["image_id"], []).append((ann.get("id", i), ann["segmentation"]))

    samples = []
    for i, img in enumerate(data["images"]):
        try:
            image_id, name = img["id"], str(img["file_name"])
            declared = (int(img["height"]), int(img["width"]))
        except (KeyError, TypeError, ValueError):
            raise DataError(
                f"{json_path}: images[{i}] needs 'id', 'file_name', 'width' and 'height'"
            ) from None
        segs = tuple(by_image.pop(image_id, ()))
        fn = partial(_coco_mask, segmentations=segs, declared=declared, where=f"{json_path}")
        sample_id = Path(name).with_suffix("").as_posix()
        samples.append(Sample(id=sample_id, image_path=_resolve(name, roots), mask_fn=fn))
    if by_image:
        orphans = ", ".join(str(k) for k in list(by_image)[:5])
        raise DataError(f"{json_path}: annotations refer to image ids not in 'images': {orphans}")
    if not samples:
        raise DataError(f"{json_path}: empty data set: no images listed")
    return samples
