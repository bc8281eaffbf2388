"""A seeded corpus of bad and odd inputs for the fuzz test, built in a temporary folder.

Every case carries what each consumer must do with it: `measure`, `predict` and the
dashboard's Analyse upload path. An expectation is one of
  error    named in an `error:` line,
  warn     named in a `warning:` line and in no error line (still measured),
  flagged  named in an error or a warning line (a cut video: the dashboard shows its frames),
  ok       measured, named in no error or warning line,
  skip     not given to that consumer (a URL is no upload).
"""

from __future__ import annotations

import io
import random
import shutil
import struct
import subprocess
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from spraycv.io.exposure import Exposure
from spraycv.io.images import MAX_IMAGE_PIXELS

CONSUMERS = ("measure", "predict", "dashboard")
IMAGE_FORMATS = (".png", ".jpg", ".bmp", ".tif", ".webp")


@dataclass(frozen=True)
class Case:
    source: str  # a file path, or a URL
    category: str
    expect: dict[str, str]  # consumer -> error | warn | flagged | ok | skip

    @property
    def name(self) -> str:
        return Path(self.source).name if "://" not in self.source else self.source


DARK_BELOW = Exposure().dim_below  # a photo whose brightest level is below: a warning


def _everywhere(outcome: str) -> dict[str, str]:
    return dict.fromkeys(CONSUMERS, outcome)


@dataclass
class Corpus:
    root: Path
    rng: random.Random
    cases: list[Case] = field(default_factory=list)

    def add(self, category: str, suffix: str, data: bytes, expect: dict[str, str]) -> Path:
        path = self.root / f"c{len(self.cases):03d}_{category}{suffix}"
        path.write_bytes(data)
        self.cases.append(Case(str(path), category, expect))
        return path


def _encode(image: np.ndarray, suffix: str) -> bytes:
    ok, buf = cv2.imencode(suffix, image)
    assert ok, suffix
    return buf.tobytes()


def _pillow(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def blank_png(width: int, height: int) -> bytes:
    """A valid greyscale PNG of zeros, compressed without ever holding the pixels."""
    compressor = zlib.compressobj(6)
    row = b"\x00" * (width + 1)  # filter byte + pixels
    rows_per_call = max(1, 2**24 // len(row))
    parts = [
        compressor.compress(row * min(rows_per_call, height - y))
        for y in range(0, height, rows_per_call)
    ]
    idat = b"".join(parts) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    signature = b"\x89PNG\r\n\x1a\n"
    return (
        signature
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def _huge_headers(width: int, height: int) -> dict[str, bytes]:
    """Files whose headers claim huge dimensions, with hardly any data behind them."""
    png = blank_png(16, 16)
    png = png[:16] + struct.pack(">II", width, height) + png[24:]  # IHDR's size, CRC unchecked
    jpeg = bytearray(_encode(np.zeros((16, 16, 3), np.uint8), ".jpg"))
    sof = jpeg.index(b"\xff\xc0")
    jpeg[sof + 5 : sof + 9] = struct.pack(">HH", min(height, 65535), min(width, 65535))
    bmp = bytearray(_encode(np.zeros((16, 16, 3), np.uint8), ".bmp"))
    bmp[18:26] = struct.pack("<ii", width, height)
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4
    vp8x += (16383 - 1).to_bytes(3, "little") + (16383 - 1).to_bytes(3, "little")
    webp = b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x
    return {".png": png, ".jpg": bytes(jpeg), ".bmp": bytes(bmp), ".webp": webp}


def spray_picture(size: tuple[int, int], samples: Path) -> np.ndarray:
    """A bundled sample photo (with sprays) resized: (H, W, 3) uint8 BGR."""
    image = cv2.imread(str(samples / "images" / "000000.jpg"))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def _images(corpus: Corpus, picture: np.ndarray) -> None:
    rng = corpus.rng
    whole = {suffix: _encode(picture, suffix) for suffix in IMAGE_FORMATS}
    for suffix, data in whole.items():  # truncated: 18 cuts per format
        for _ in range(18):
            cut = rng.randint(1, len(data) - 16)
            corpus.add("truncated", suffix, data[:cut], _everywhere("error"))
    for suffix in (*IMAGE_FORMATS, ".jpeg", ".tiff"):  # empty
        corpus.add("empty", suffix, b"", _everywhere("error"))
    for suffix in (*IMAGE_FORMATS, ".jpeg", ".tiff"):  # wrong magic: noise and text
        for _ in range(5):
            noise = rng.randbytes(rng.randint(1, 4000))
            corpus.add("noise", suffix, noise, _everywhere("error"))
        corpus.add("text", suffix, b"this is not an image\n" * 10, _everywhere("error"))
    magics = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0", b"BM", b"II*\x00", b"RIFF\0\0\0\0WEBP")
    for magic, suffix in zip(magics, IMAGE_FORMATS, strict=True):  # right magic, then garbage
        for _ in range(4):
            corpus.add(
                "garbage", suffix, magic + rng.randbytes(rng.randint(0, 600)), _everywhere("error")
            )
    corpus.add("gif", ".gif", _pillow(Image.new("RGB", (32, 32)), "GIF"), _everywhere("error"))


def _degenerate(corpus: Corpus) -> None:
    sizes = [
        (1, 1),
        (1, 5000),
        (5000, 1),
        (2, 2),
        (7, 7),
        (1, 2),
        (3, 8),
        (8, 3),
        (7, 400),
        (400, 7),
    ]
    for width, height in sizes:
        image = np.full((height, width, 3), 200, np.uint8)
        for suffix in IMAGE_FORMATS:
            corpus.add("tiny", suffix, _encode(image, suffix), _everywhere("error"))
    ramp = np.repeat(np.linspace(60, 160, 8, dtype=np.uint8)[None, :, None], 8, axis=0)
    for suffix in IMAGE_FORMATS:  # the smallest size measured: fine
        corpus.add(
            "min_size", suffix, _encode(np.repeat(ramp, 3, axis=2), suffix), _everywhere("ok")
        )
    for level in (128, 255):  # flat: nothing to see, said so (a covered lens, a saturated sensor)
        flat = np.full((48, 64, 3), level, np.uint8)
        corpus.add("flat", ".png", _encode(flat, ".png"), _everywhere("warn"))


def _pixel_formats(corpus: Corpus, picture: np.ndarray) -> None:
    """16-bit, alpha and palette images of a spray photo: all measured."""
    grey = cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY)
    deep = picture.astype(np.uint16) * 257
    arrays = {
        "grey16": (grey.astype(np.uint16) * 257, (".png", ".tif")),
        "rgb16": (deep, (".png", ".tif")),
        "rgba16": (cv2.cvtColor(deep, cv2.COLOR_BGR2BGRA), (".png", ".tif")),
        "rgba": (cv2.cvtColor(picture, cv2.COLOR_BGR2BGRA), (".png", ".tif", ".webp", ".bmp")),
        "grey": (grey, IMAGE_FORMATS),
    }
    for category, (array, suffixes) in arrays.items():
        for suffix in suffixes:
            corpus.add(category, suffix, _encode(array, suffix), _everywhere("ok"))
    rgb = Image.fromarray(cv2.cvtColor(picture, cv2.COLOR_BGR2RGB))
    pillow_modes = {
        "P": ("PNG", "BMP", "TIFF"),
        "LA": ("PNG",),
        "1": ("PNG", "BMP"),
        "CMYK": ("JPEG", "TIFF"),
    }
    suffix_of = {"PNG": ".png", "BMP": ".bmp", "TIFF": ".tif", "JPEG": ".jpg"}
    for mode, formats in pillow_modes.items():
        for fmt in formats:
            corpus.add(
                f"mode_{mode}", suffix_of[fmt], _pillow(rgb.convert(mode), fmt), _everywhere("ok")
            )


def _huge(corpus: Corpus) -> None:
    """Huge dimensions in small files: refused from the header, before decoding."""
    corpus.add("huge20k", ".png", blank_png(20000, 20000), _everywhere("error"))
    side = int(MAX_IMAGE_PIXELS**0.5) + 1  # one row over the limit
    corpus.add("over_limit", ".png", blank_png(side, side), _everywhere("error"))
    for width, height in ((100_000, 100_000), (60_000, 700)):
        for suffix, data in _huge_headers(width, height).items():
            corpus.add("huge_header", suffix, data, _everywhere("error"))


def _masks(corpus: Corpus) -> None:
    """Single-channel files: binary masks (read as masks), few grey levels (read as photos,
    with a warning from measure), many grey levels (photos, silently). Read as a photo, a
    file whose brightest level is under 64 is under-exposed: predict and the dashboard warn
    (measure reads a 0/1 mask as a mask, and warns about few levels anyway)."""
    rng = corpus.rng
    yy, xx = np.mgrid[0:120, 0:160]
    cone = (np.abs(xx - 80) < (yy * 0.6)).astype(np.uint8)  # a triangle from the top
    for high in (1, 255):
        dark = "warn" if high < DARK_BELOW else "ok"
        expect = {"measure": "ok", "predict": dark, "dashboard": dark}
        corpus.add("mask_binary", ".png", _encode(cone * high, ".png"), expect)
    level_sets = [(0, 17, 200), (0, 128), (0, 1, 2), (0, 254, 255), (0, 100, 255), (3, 200)]
    level_sets += [tuple(sorted(rng.sample(range(256), rng.randint(3, 16)))) for _ in range(20)]
    for levels in level_sets:
        picks = np.array(levels, np.uint8)
        noise = np.random.default_rng(rng.randint(0, 2**31)).integers(0, len(picks), cone.shape)
        image = np.where(cone > 0, picks[-1], picks[noise])
        dark = "warn" if levels[-1] < DARK_BELOW else "ok"
        expect = {"measure": "warn", "predict": dark, "dashboard": dark}
        corpus.add("mask_levels", ".png", _encode(image.astype(np.uint8), ".png"), expect)
    ramp = (np.arange(120 * 160) % 97).reshape(120, 160).astype(np.uint8)  # 97 levels: a photo
    corpus.add("grey_many", ".png", _encode(ramp, ".png"), _everywhere("ok"))


def _ffmpeg(out: Path, *args: str) -> Path:
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", *args, str(out)], check=True)
    return out


def _videos(corpus: Corpus, scratch: Path) -> None:
    rng = corpus.rng
    source = ["-f", "lavfi", "-i", "testsrc=size=64x48:rate=8", "-t", "1"]
    made = {
        ".mp4": _ffmpeg(
            scratch / "fast.mp4", *source, "-pix_fmt", "yuv420p", "-movflags", "+faststart"
        ),
        ".m4v": _ffmpeg(scratch / "end.mp4", *source, "-pix_fmt", "yuv420p", "-f", "mp4"),
        ".avi": _ffmpeg(scratch / "v.avi", *source, "-c:v", "mjpeg"),
        ".mkv": _ffmpeg(scratch / "v.mkv", *source, "-c:v", "mjpeg"),
    }
    good = {"measure": "error", "predict": "ok", "dashboard": "ok"}  # measure reads images
    corpus.add("video_good", ".mp4", made[".mp4"].read_bytes(), good)
    cut_short = {"measure": "error", "predict": "error", "dashboard": "flagged"}
    for suffix, path in made.items():
        data = path.read_bytes()
        for fraction in (0.35, 0.55, 0.75):
            cut = int(len(data) * (fraction + rng.uniform(-0.05, 0.05)))
            corpus.add("video_cut", suffix, data[:cut], cut_short)
    audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5"]
    for suffix, codec in (
        (".mp4", "aac"),
        (".mkv", "pcm_s16le"),
        (".avi", "pcm_s16le"),
        (".webm", "libopus"),
    ):
        path = _ffmpeg(scratch / f"audio{suffix}", *audio, "-c:a", codec)
        corpus.add("audio_only", suffix, path.read_bytes(), _everywhere("error"))
    for suffix in (".mp4", ".avi", ".mkv", ".webm", ".mov"):
        corpus.add("video_noise", suffix, rng.randbytes(3000), _everywhere("error"))
        corpus.add("video_empty", suffix, b"", _everywhere("error"))


def _urls(corpus: Corpus, refused_port: int) -> None:
    """Streams nothing answers (a port bound by the test but never listening) and schemes
    refused up front. The dashboard takes uploads only."""
    expect = {"measure": "error", "predict": "error", "dashboard": "skip"}
    urls = [
        f"http://127.0.0.1:{refused_port}/x.mjpg",
        f"rtsp://127.0.0.1:{refused_port}/stream",
        f"https://127.0.0.1:{refused_port}/a//b.mp4",
        "ftp://127.0.0.1/x.mp4",
        "file:///etc/passwd",
        "gopher://127.0.0.1/x",
    ]
    corpus.cases += [Case(url, "url", expect) for url in urls]


def good_inputs(corpus: Corpus, samples: Path) -> list[Case]:
    """The sample photos, each measured everywhere: they must still be measured."""
    good = []
    for path in sorted((samples / "images").glob("*.jpg")):
        target = corpus.root / f"good_{path.name}"
        shutil.copyfile(path, target)
        good.append(Case(str(target), "good", _everywhere("ok")))
    return good


def build(
    root: Path, samples: Path, seed: int, refused_port: int, limit_picture: Callable[[], bytes]
) -> tuple[list[Case], list[Case]]:
    """(odd and bad cases, good cases) under root. `limit_picture` makes the spray photo at
    the pixel limit, which must be measured within the memory bound."""
    corpus = Corpus(root, random.Random(seed))
    scratch = root / "scratch"
    scratch.mkdir()
    picture = spray_picture((96, 96), samples)
    _images(corpus, picture)
    _degenerate(corpus)
    _pixel_formats(corpus, picture)
    _huge(corpus)
    _masks(corpus)
    _videos(corpus, scratch)
    _urls(corpus, refused_port)
    shutil.rmtree(scratch)
    good = good_inputs(corpus, samples)
    limit = root / "good_at_pixel_limit.jpg"
    limit.write_bytes(limit_picture())
    good.append(Case(str(limit), "good", _everywhere("ok")))
    return corpus.cases, good


def sources_for(consumer: str, cases: list[Case]) -> Iterator[str]:
    return (case.source for case in cases if case.expect[consumer] != "skip")
