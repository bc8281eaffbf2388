"""Folders of images with same-named mask images (the layout the synthetic renderer writes).

Two layouts:

    DIR/images/x.jpg + DIR/masks/x.png      (split; the renderer's output)
    DIR/x.jpg        + DIR/x_mask.png       (flat)

Masks are 0/1 or 0/255 single-channel images (any image suffix; .png preferred).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from spraycv.data.sample import DataError, Sample
from spraycv.io.images import IMAGE_SUFFIXES

MASK_SUFFIX = "_mask"  # flat layout: x.jpg + x_mask.png


def _image_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


def _find_mask(folder: Path, stem: str) -> Path:
    """The mask file for `stem`, or the expected .png path (reported missing when loaded)."""
    for suffix in (".png", *IMAGE_SUFFIXES):
        for candidate in (folder / f"{stem}{suffix}", folder / f"{stem}{suffix.upper()}"):
            if candidate.is_file():
                return candidate
    return folder / f"{stem}.png"


def _pairs(images: list[Path], mask_dir: Path, mask_suffix: str) -> list[Sample]:
    samples, seen = [], {}
    for image in images:
        if image.stem in seen:
            raise DataError(
                f"two images share the name {image.stem!r}: {seen[image.stem].name} and "
                f"{image.name}; masks are matched by name, rename one"
            )
        seen[image.stem] = image
        mask = _find_mask(mask_dir, image.stem + mask_suffix)
        samples.append(Sample(id=image.stem, image_path=image, mask_path=mask))
    return samples


def is_folder_layout(path: Path) -> bool:
    """True if `path` holds `images/` and `masks/` (split layout) or flat `*_mask.*` files.

    `images/` alone is not enough: COCO sets often sit in `images/` + `annotations/`.
    """
    if (path / "images").is_dir() and (path / "masks").is_dir():
        return True
    return any(p.stem.endswith(MASK_SUFFIX) for p in _image_files(path))


def load_folder(path: str | Path, *, labels: Collection[str] | None = None) -> list[Sample]:
    """Samples of a mask folder, sorted by name; an image without a mask is kept so that
    loading it (or `check`) reports the missing mask."""
    path = Path(path)
    if labels:
        raise DataError("the folder format has no labels: every non-zero mask pixel is spray")
    if not path.is_dir():
        raise DataError(f"{path}: not a folder")
    if (path / "images").is_dir():
        samples = _pairs(_image_files(path / "images"), path / "masks", "")
    else:
        files = _image_files(path)
        images = [p for p in files if not p.stem.endswith(MASK_SUFFIX)]
        samples = _pairs(images, path, MASK_SUFFIX)
    if not samples:
        raise DataError(
            f"{path}: empty folder: no images found (expected images/<name>.jpg with "
            f"masks/<name>.png, or <name>.jpg with <name>{MASK_SUFFIX}.png side by side)"
        )
    return samples
