"""Reading images and masks from disk, with errors that say what is wrong."""

from __future__ import annotations

import glob
from collections.abc import Iterable, Iterator
from pathlib import Path

import cv2
import numpy as np

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


class ImageReadError(ValueError):
    """An image or mask file is missing, unreadable or corrupt."""


def read_image(path: str | Path) -> np.ndarray:
    """Read an image file as it is stored.

    Returns:
        (H, W) uint8 for single-channel files, (H, W, 3) uint8 BGR otherwise
        (an alpha channel is dropped; 16-bit images are scaled to 8 bits).
    """
    path = Path(path)
    if not path.is_file():
        raise ImageReadError(f"{path}: no such file")
    data = np.fromfile(path, dtype=np.uint8)
    if data.size == 0:
        raise ImageReadError(f"{path}: file is empty")
    image = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
    if image is None:
        raise ImageReadError(f"{path}: not a readable image (corrupt or unsupported format)")
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    if image.dtype != np.uint8:
        raise ImageReadError(f"{path}: unsupported pixel type {image.dtype}")
    if image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    return image


def looks_like_mask(image: np.ndarray) -> bool:
    """True for a single-channel image whose values are only {0, 1} or {0, 255} (or one of them)."""
    if image.ndim != 2:
        return False
    values = np.unique(image)
    return bool(values.size <= 2 and np.isin(values, (0, 1)).all()) or bool(
        values.size <= 2 and np.isin(values, (0, 255)).all()
    )


def to_binary_mask(image: np.ndarray) -> np.ndarray:
    """(H, W) uint8 stored mask (0/1 or 0/255) -> (H, W) uint8 {0, 1}."""
    return (image > (0 if image.max() <= 1 else 127)).astype(np.uint8)


def expand_sources(sources: Iterable[str | Path]) -> Iterator[Path]:
    """Yield image paths from files, folders (sorted, not recursive) and glob patterns.

    A source that matches nothing is yielded as is, so that the caller reports it.
    """
    for source in sources:
        text = str(source)
        path = Path(text)
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        elif any(ch in text for ch in "*?[") and not path.exists():
            matches = sorted(glob.glob(text, recursive=True))
            yield from (Path(m) for m in matches) if matches else (path,)
        else:
            yield path
