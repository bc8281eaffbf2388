"""Reading images and masks, with errors that say what is wrong and bounds on what is decoded.

Every image goes through `decode_image`: the header is read first (dimensions and pixel
format, without decoding a pixel), so that a 20000 x 20000 PNG of 1 MB is refused before
it costs gigabytes. The CLI, the dashboard and the data loaders share these limits.
"""

from __future__ import annotations

import glob
import importlib
import io
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from spraycv.io.exposure import to_uint8

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")

MAX_IMAGE_PIXELS = 20_000_000
"""Largest image decoded by default (width x height; e.g. 5472 x 3648). Measuring costs about
10 bytes per pixel on top of the ~1.2 GB the model's libraries take, so an image at this
limit keeps `spraycv measure`, `predict` and the dashboard's Analyse page under 1.5 GB
(tests/fuzz). `--max-pixels` and SPRAYCV_MAX_IMAGE_PIXELS raise it."""

ENV_MAX_PIXELS = "SPRAYCV_MAX_IMAGE_PIXELS"  # the limit for every command and the dashboard

MIN_IMAGE_SIDE_PX = 8
"""Smallest width and height measured: below it no spray can be told from its background
(and the classical segmenter's filters do not fit)."""

BYTES_PER_PIXEL_STORED = 8
"""The most an uncompressed file stores per pixel (16-bit RGBA): with 64 MiB for metadata,
it bounds the size of a file read whole into memory."""

# Pixel formats (Pillow's mode names) by how they are decoded: one channel or BGR colour.
GREY_MODES = frozenset({"1", "L", "LA", "La", "I;16", "I;16B", "I;16L", "I;16N"})
COLOUR_MODES = frozenset({"RGB", "RGBA", "RGBX", "RGBa", "P", "PA", "CMYK", "YCbCr"})
# what a refused mode holds, in words (the mode's name alone means little to a user)
MODE_WORDS = {"F": "32-bit floating point", "I": "32-bit integer", "I;32": "32-bit integer"}
PILLOW_UNKNOWN_MODE = "unknown pixel mode"  # Pillow's header error for a sample layout it lacks
READ_MODES = "read: 8- or 16-bit grey, colour, colour with alpha, palette"


class ImageReadError(ValueError):
    """An image or mask file is missing, unreadable, corrupt, or outside the limits."""


@dataclass(frozen=True)
class ImageHeader:
    """What an image file says about itself before any pixel is decoded."""

    format: str
    width: int
    height: int
    mode: str  # Pillow's name of the pixel format: "L", "RGB", "I;16", "P", ...

    @property
    def pixels(self) -> int:
        return self.width * self.height


def configured_max_pixels(environ: Mapping[str, str] | None = None) -> int:
    """The pixel limit in force: SPRAYCV_MAX_IMAGE_PIXELS when it holds a positive whole
    number (a bad value falls back, as the dashboard's settings do), else MAX_IMAGE_PIXELS."""
    text = (os.environ if environ is None else environ).get(ENV_MAX_PIXELS, "")
    return int(text) if text.strip().isdigit() and int(text) > 0 else MAX_IMAGE_PIXELS


def _limit(max_pixels: int | None) -> int:
    return configured_max_pixels() if max_pixels is None else max_pixels


def max_file_bytes(max_pixels: int) -> int:
    """The largest file read whole into memory for a pixel limit (see BYTES_PER_PIXEL_STORED)."""
    return max_pixels * BYTES_PER_PIXEL_STORED + 64 * 2**20


def _pillow_header(plugin: str, cls: str) -> Callable[[bytes], tuple[int, int, str]]:
    """A header reader from a Pillow plugin class: its constructor parses the header only, and
    without Image.open's process-wide decompression-bomb setting (the limit here is ours)."""

    def read(data: bytes) -> tuple[int, int, str]:
        image = getattr(importlib.import_module(f"PIL.{plugin}"), cls)(io.BytesIO(data))
        return image.size[0], image.size[1], image.mode

    return read


def _webp_header(data: bytes) -> tuple[int, int, str]:
    """WebP's canvas size from its first chunk (Pillow's reader allocates the canvas)."""
    chunk, body = data[12:16], data[20:30]
    if chunk == b"VP8X" and len(body) >= 10:
        width, height = (1 + int.from_bytes(body[i : i + 3], "little") for i in (4, 7))
        return width, height, "RGBA"
    if chunk == b"VP8 " and len(body) >= 10 and body[3:6] == b"\x9d\x01\x2a":
        width, height = (int.from_bytes(body[i : i + 2], "little") & 0x3FFF for i in (6, 8))
        return width, height, "RGB"
    if chunk == b"VP8L" and len(body) >= 5 and body[0] == 0x2F:
        bits = int.from_bytes(body[1:5], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF), "RGBA"
    raise ValueError("no VP8, VP8L or VP8X chunk where the header should be")


def _jpeg_scan_start(data: bytes) -> int | None:
    """Where a JPEG's entropy-coded data begins (after the first SOS segment), walking the
    marker segments; None if the segments do not lead there."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte before a marker
            pos += 1
            continue
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # markers without a length
            pos += 2
            continue
        end = pos + 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
        if marker == 0xDA:
            return end
        pos = end
    return None


def _jpeg_cut(data: bytes) -> str | None:
    # The end marker cannot occur inside entropy-coded data, and one found before the scan
    # may be an EXIF thumbnail's; libjpeg would decode a cut file with grey rows instead.
    start = _jpeg_scan_start(data)
    if start is not None and data.find(b"\xff\xd9", start) >= 0:
        return None
    return "no end marker after its image data"


def _png_cut(data: bytes) -> str | None:
    """Walk the chunks to IEND (libpng would print its own error for a cut file)."""
    pos = 8
    while pos + 12 <= len(data):
        length, kind = int.from_bytes(data[pos : pos + 4], "big"), data[pos + 4 : pos + 8]
        pos += 12 + length  # length, type, data, CRC
        if kind == b"IEND":
            return None if pos <= len(data) else "its IEND chunk is cut"
    return "its chunks end before the IEND chunk"


def _webp_cut(data: bytes) -> str | None:
    declared = 8 + int.from_bytes(data[4:8], "little")  # RIFF's size counts from byte 8
    if declared <= len(data):
        return None
    return f"{len(data)} of the {declared} bytes its header declares"


def _never_cut(data: bytes) -> str | None:  # formats whose decoders fail quietly on a cut file
    return None


@dataclass(frozen=True)
class _Format:
    name: str
    magic: bytes
    offset: int  # where the magic bytes sit
    header: Callable[[bytes], tuple[int, int, str]]
    cut: Callable[[bytes], str | None] = _never_cut  # why the file is cut short, if it is


# The formats decoded, told apart by their magic bytes as OpenCV does (not by the suffix).
FORMATS: tuple[_Format, ...] = (
    _Format(
        "PNG", b"\x89PNG\r\n\x1a\n", 0, _pillow_header("PngImagePlugin", "PngImageFile"), _png_cut
    ),
    _Format(
        "JPEG", b"\xff\xd8\xff", 0, _pillow_header("JpegImagePlugin", "JpegImageFile"), _jpeg_cut
    ),
    _Format("BMP", b"BM", 0, _pillow_header("BmpImagePlugin", "BmpImageFile")),
    *(
        _Format("TIFF", magic, 0, _pillow_header("TiffImagePlugin", "TiffImageFile"))
        for magic in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")  # classic and BigTIFF
    ),
    _Format("WebP", b"WEBP", 8, _webp_header, _webp_cut),
)
FORMAT_NAMES = "PNG, JPEG, BMP, TIFF or WebP"


def _format_of(data: bytes) -> _Format | None:
    return next((f for f in FORMATS if data[f.offset : f.offset + len(f.magic)] == f.magic), None)


def read_header(data: bytes, name: str) -> ImageHeader:
    """The format, size and pixel format of encoded image bytes; ImageReadError if unknown."""
    if not data:
        raise ImageReadError(f"{name}: file is empty")
    fmt = _format_of(data)
    if fmt is None:
        raise ImageReadError(f"{name}: not a readable image (not a {FORMAT_NAMES} file)")
    try:
        width, height, mode = fmt.header(data)
    except Exception as exc:  # Pillow's parsers raise SyntaxError, OSError, struct.error, ...
        if str(exc) == PILLOW_UNKNOWN_MODE:  # a whole header of samples not read, e.g. float RGB
            raise ImageReadError(
                f"{name}: unsupported {fmt.name} pixel format (samples of a depth or type not "
                f"read, such as floating-point colour; {READ_MODES})"
            ) from None
        raise ImageReadError(
            f"{name}: not a readable image (corrupt {fmt.name} header: {exc})"
        ) from None
    return ImageHeader(fmt.name, width, height, mode)


def check_header(header: ImageHeader, name: str, max_pixels: int | None = None) -> None:
    """Refuse, before decoding, an image too large, too small, or of a pixel format not read.

    max_pixels: None for the configured limit (configured_max_pixels).
    """
    size = f"{header.width} x {header.height} px"
    max_pixels = _limit(max_pixels)
    if header.pixels > max_pixels:
        raise ImageReadError(
            f"{name}: {size} ({header.pixels / 1e6:.1f} MP) is over the limit of "
            f"{max_pixels / 1e6:g} MP, so it is not decoded (raise the limit with --max-pixels "
            f"or {ENV_MAX_PIXELS} to measure it)"
        )
    if min(header.width, header.height) < MIN_IMAGE_SIDE_PX:
        raise ImageReadError(
            f"{name}: {size} is too small to measure (at least {MIN_IMAGE_SIDE_PX} px a side)"
        )
    if header.mode not in GREY_MODES | COLOUR_MODES:
        words = f", {MODE_WORDS[header.mode]}" if header.mode in MODE_WORDS else ""
        raise ImageReadError(
            f"{name}: unsupported pixel format {header.mode!r}{words} ({READ_MODES}; export "
            "the image as 8 or 16 bits)"
        )


def inspect_image(data: bytes, name: str, max_pixels: int | None = None) -> ImageHeader:
    """Everything checked before decoding: the header, the limits, and that the file is whole."""
    header = read_header(data, name)
    check_header(header, name, max_pixels)
    fmt = _format_of(data)
    why = fmt.cut(data) if fmt is not None else None
    if why is not None:
        raise ImageReadError(f"{name}: the {header.format} file is cut short ({why})")
    return header


def decode_image(
    data: bytes,
    name: str,
    max_pixels: int | None = None,
    colour: bool = False,
    exif_orientation: bool = True,
) -> np.ndarray:
    """Decode image bytes after checking them (see inspect_image).

    Args:
        colour: always BGR, also for single-channel files (the dashboard's choice).
        exif_orientation: turn a photo upright as its EXIF tag says, as viewers, LabelMe
            and OpenCV's imread show it (False: as stored).
    Returns:
        (H, W) uint8 for single-channel files, (H, W, 3) uint8 BGR otherwise (an alpha
        channel is dropped; 16-bit images are stretched to 8 bits between percentiles of
        their brightness, spraycv.io.exposure.to_uint8, so 10-12-bit data reads whichever
        bits it is aligned to).
    """
    header = inspect_image(data, name, max_pixels)
    flags = cv2.IMREAD_COLOR if colour or header.mode in COLOUR_MODES else cv2.IMREAD_GRAYSCALE
    flags |= cv2.IMREAD_ANYDEPTH  # keep 16 bits: dropping the low byte blackens 12-bit data
    if not exif_orientation:
        flags |= cv2.IMREAD_IGNORE_ORIENTATION
    image = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    if image is None:
        raise ImageReadError(f"{name}: not a readable image (corrupt or unsupported format)")
    if image.shape[0] * image.shape[1] != header.pixels:  # never more than the header said
        raise ImageReadError(
            f"{name}: decoded {image.shape[1]} x {image.shape[0]} px, but the header says "
            f"{header.width} x {header.height}"
        )
    if image.dtype not in (np.uint8, np.uint16):
        raise ImageReadError(f"{name}: {image.dtype} pixels are not read (8- or 16-bit only)")
    return to_uint8(image)


def read_image(path: str | Path, max_pixels: int | None = None) -> np.ndarray:
    """Read an image file upright (a photo's EXIF orientation applied, as every viewer and
    LabelMe show it, so labels drawn there fit), within the limits (max_pixels: None for the
    configured limit).

    Returns:
        (H, W) uint8 for single-channel files, (H, W, 3) uint8 BGR otherwise (an alpha
        channel is dropped; 16-bit images are stretched to 8 bits, as in decode_image).
    """
    path = Path(path)
    if not path.is_file():
        raise ImageReadError(f"{path}: no such file")
    size, max_pixels = path.stat().st_size, _limit(max_pixels)
    if size > max_file_bytes(max_pixels):
        raise ImageReadError(
            f"{path}: {size / 2**20:.0f} MB is larger than any image of at most "
            f"{max_pixels / 1e6:g} MP can be, so it is not read"
        )
    return decode_image(path.read_bytes(), str(path), max_pixels)


def grey_levels(image: np.ndarray) -> np.ndarray:
    """The distinct values of a uint8 image, ascending (a histogram: no sort of the pixels)."""
    return np.flatnonzero(np.bincount(image.ravel(), minlength=256))


def looks_like_mask(image: np.ndarray) -> bool:
    """True for a single-channel image whose values are only {0, 1} or {0, 255} (or one of them)."""
    if image.ndim != 2:
        return False
    levels = set(grey_levels(image).tolist())
    return levels <= {0, 1} or levels <= {0, 255}


def to_binary_mask(image: np.ndarray) -> np.ndarray:
    """(H, W) uint8 stored mask (0/1 or 0/255) -> (H, W) uint8 {0, 1}."""
    return (image > (0 if image.max() <= 1 else 127)).astype(np.uint8)


def expand_sources(sources: Iterable[str | Path]) -> Iterator[Path]:
    """Yield image paths from files, folders (sorted, not recursive) and glob patterns.

    A source that matches nothing is yielded as is, so that the caller reports it.
    """
    for source in sources:
        found = source_files(source)
        missing = not found and not Path(str(source)).is_dir()  # a pattern matching nothing
        yield from [Path(str(source))] if missing else found


def source_files(source: str | Path) -> list[Path]:
    """The files one source names: itself, a folder's images (sorted, not recursive) or a
    pattern's matches; [] for an empty folder or a pattern that matches nothing."""
    text = str(source)
    path = Path(text)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if any(ch in text for ch in "*?[") and not path.exists():
        return [Path(m) for m in sorted(glob.glob(text, recursive=True))]
    return [path]
