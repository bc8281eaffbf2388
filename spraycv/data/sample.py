"""One training sample: an image and its binary spray mask, read lazily from disk."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from spraycv.io.images import ImageReadError, read_image, to_binary_mask

# Rasterises a mask for an image of the given (H, W); returns (H, W) uint8 {0, 1}.
# Loaders pass functools.partial objects of module-level functions so samples pickle
# (DataLoader workers started with "spawn" need that).
MaskFn = Callable[[tuple[int, int]], np.ndarray]


class DataError(ValueError):
    """A data set, annotation file or sample is missing, malformed or inconsistent."""


@dataclass(frozen=True)
class Sample:
    """An image with a binary spray mask.

    Exactly one mask source is set: `mask_path` (a stored 0/1 or 0/255 mask image) or
    `mask_fn` (rasterises annotations for the image's size). `image_bytes` holds an encoded
    image embedded in an annotation file (LabelMe `imageData`); it takes precedence over
    `image_path`, which then only names the sample in messages. `defect` records a problem
    found while indexing (e.g. a malformed annotation file): `load()` raises it, so that
    `check_samples` can report every broken sample instead of stopping at the first.
    """

    id: str
    image_path: Path
    mask_path: Path | None = None
    mask_fn: MaskFn | None = None
    image_bytes: bytes | None = None
    defect: str | None = None

    def load_image(self) -> np.ndarray:
        """(H, W, 3) uint8 BGR image (grey files are expanded to 3 channels)."""
        if self.defect is not None:
            raise DataError(self.defect)
        if self.image_bytes is not None:
            image = cv2.imdecode(np.frombuffer(self.image_bytes, np.uint8), cv2.IMREAD_COLOR)
            if image is None:
                raise DataError(f"{self.image_path}: embedded image data is not a readable image")
        else:
            try:
                image = read_image(self.image_path)
            except ImageReadError as exc:
                raise DataError(f"image {exc}") from None
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        return image

    def load_mask(self, shape: tuple[int, int]) -> np.ndarray:
        """(H, W) uint8 {0, 1} mask for an image of size `shape` = (H, W)."""
        if self.defect is not None:
            raise DataError(self.defect)
        if self.mask_fn is not None:
            mask = self.mask_fn(shape)
        elif self.mask_path is not None:
            mask = _read_mask(self.mask_path)
        else:
            raise DataError(f"{self.image_path}: sample has no mask source")
        if mask.shape != tuple(shape):
            what = f"mask {self.mask_path}" if self.mask_fn is None else "annotation mask"
            raise DataError(
                f"mask/image size mismatch: {what} is {mask.shape[1]}x{mask.shape[0]} but "
                f"image {self.image_path} is {shape[1]}x{shape[0]} (W x H)"
            )
        return mask

    def load(self) -> tuple[np.ndarray, np.ndarray]:
        """Returns (image (H, W, 3) uint8 BGR, mask (H, W) uint8 {0, 1})."""
        image = self.load_image()
        return image, self.load_mask(image.shape[:2])


def _read_mask(path: Path) -> np.ndarray:
    """Stored mask file -> (H, W) uint8 {0, 1}; colour masks count any bright channel."""
    if not path.is_file():
        raise DataError(f"mask missing: {path}: no such file")
    try:
        stored = read_image(path)
    except ImageReadError as exc:
        raise DataError(f"mask unreadable: {exc}") from None
    if stored.ndim == 3:
        stored = stored.max(axis=2)
    return to_binary_mask(stored)
