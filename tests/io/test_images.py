from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from spraycv.io.images import (
    MAX_IMAGE_PIXELS,
    ImageReadError,
    configured_max_pixels,
    decode_image,
    expand_sources,
    grey_levels,
    inspect_image,
    looks_like_mask,
    max_file_bytes,
    read_image,
    source_files,
    to_binary_mask,
)


def _write(path: Path, array: np.ndarray) -> Path:
    assert cv2.imwrite(str(path), array)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"", "file is empty"),
        (b"this is not an image", "not a readable image"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "not a readable image"),
    ],
)
def test_read_image_errors_name_the_problem(tmp_path: Path, content: bytes | None, message: str):
    path = tmp_path / "bad.png"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ImageReadError, match=message):
        read_image(path)


def test_read_truncated_jpeg_fails_or_returns_full_size(tmp_path: Path):
    # libjpeg decodes a truncated file partially; it must never come back with another size
    image = np.random.default_rng(0).integers(0, 255, (64, 80, 3), dtype=np.uint8)
    good = _write(tmp_path / "good.jpg", image)
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(good.read_bytes()[:200])
    try:
        out = read_image(cut)
    except ImageReadError:
        return
    assert out.shape == image.shape


@pytest.mark.parametrize(
    ("array", "shape"),
    [
        (np.zeros((20, 30), np.uint8), (20, 30)),
        (np.zeros((20, 30, 3), np.uint8), (20, 30, 3)),
        (np.zeros((20, 30, 4), np.uint8), (20, 30, 3)),
        (np.full((20, 30), 65535, np.uint16), (20, 30)),
    ],
)
def test_read_image_normalises_channels_and_depth(tmp_path: Path, array: np.ndarray, shape):
    out = read_image(_write(tmp_path / "x.png", array))
    assert out.shape == shape
    assert out.dtype == np.uint8


@pytest.mark.parametrize(
    ("values", "expected"),
    [((0, 1), True), ((0, 255), True), ((0,), True), ((255,), True), ((0, 128, 255), False)],
)
def test_looks_like_mask(values: tuple[int, ...], expected: bool):
    image = np.array([values * 4], dtype=np.uint8)
    assert looks_like_mask(image) is expected
    assert looks_like_mask(np.dstack([image] * 3)) is False


@pytest.mark.parametrize("high", [1, 255])
def test_to_binary_mask(high: int):
    stored = np.array([[0, high], [high, 0]], dtype=np.uint8)
    np.testing.assert_array_equal(to_binary_mask(stored), [[0, 1], [1, 0]])


def test_expand_sources_folder_glob_and_missing(tmp_path: Path):
    for name in ("b.png", "a.jpg", "notes.txt"):
        (tmp_path / name).write_bytes(b"x")
    assert [p.name for p in expand_sources([tmp_path])] == ["a.jpg", "b.png"]
    assert [p.name for p in expand_sources([str(tmp_path / "*.png")])] == ["b.png"]
    missing = tmp_path / "nothing-*.png"
    assert list(expand_sources([str(missing)])) == [missing]


def _png(array: np.ndarray) -> bytes:
    return cv2.imencode(".png", array)[1].tobytes()


def _blank_png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height (with a valid CRC) and almost no data."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"") + chunk(b"IEND", b"")


def test_the_pixel_limit_is_checked_from_the_header_before_decoding():
    huge = _blank_png_header(20000, 20000)  # decoding would cost 400 MB; its data is empty
    with pytest.raises(ImageReadError, match=r"20000 x 20000 px \(400.0 MP\) is over the limit"):
        decode_image(huge, "huge.png")
    header = inspect_image(_png(np.zeros((100, 100), np.uint8)), "a.png", max_pixels=10_000)
    assert (header.format, header.width, header.height, header.mode) == ("PNG", 100, 100, "L")
    with pytest.raises(ImageReadError, match=r"over the limit of 0\.009 MP"):
        inspect_image(_png(np.zeros((100, 100), np.uint8)), "a.png", max_pixels=9_000)


@pytest.mark.parametrize(("shape", "ok"), [((8, 8), True), ((7, 8), False), ((1, 5000), False)])
def test_images_too_small_to_measure_are_refused(shape: tuple[int, int], ok: bool):
    data = _png(np.full(shape, 9, np.uint8))
    if ok:
        assert decode_image(data, "x.png").shape == shape
    else:
        with pytest.raises(ImageReadError, match="too small to measure"):
            decode_image(data, "x.png")


def _jpeg_with_thumbnail(image: np.ndarray) -> bytes:
    """A JPEG whose APP1 segment holds a whole small JPEG, end marker included (as EXIF
    thumbnails do)."""
    import struct

    data = cv2.imencode(".jpg", image)[1].tobytes()
    thumbnail = cv2.imencode(".jpg", image[:8, :8])[1].tobytes()
    body = b"Exif\x00\x00" + thumbnail
    return data[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + data[2:]


@pytest.mark.parametrize("suffix", [".jpg", ".png", ".webp", "thumbnail"])
def test_a_cut_file_is_refused_before_its_decoder_sees_it(suffix: str):
    image = np.random.default_rng(0).integers(0, 255, (40, 50, 3), dtype=np.uint8)
    encoded = cv2.imencode(suffix if suffix != "thumbnail" else ".jpg", image)[1].tobytes()
    whole = _jpeg_with_thumbnail(image) if suffix == "thumbnail" else encoded
    assert decode_image(whole, "whole").shape == (40, 50, 3)
    with pytest.raises(ImageReadError, match="file is cut short"):
        decode_image(whole[: len(whole) * 2 // 3], "cut")


def test_a_jpeg_with_data_after_its_end_is_whole():  # e.g. a phone's motion photo
    image = np.random.default_rng(1).integers(0, 255, (40, 50, 3), dtype=np.uint8)
    data = cv2.imencode(".jpg", image)[1].tobytes() + b"\x00\x00\x00\x18ftypmp42" + bytes(500)
    assert decode_image(data, "motion.jpg").shape == (40, 50, 3)


@pytest.mark.parametrize(
    ("mode", "fmt", "shape"),
    [("LA", "PNG", (20, 30)), ("P", "PNG", (20, 30, 3)), ("1", "BMP", (20, 30)),
     ("CMYK", "JPEG", (20, 30, 3)), ("RGBA", "WEBP", (20, 30, 3)), ("I;16", "TIFF", (20, 30))],
)  # fmt: skip
def test_pixel_formats_decode_to_grey_or_bgr(mode: str, fmt: str, shape: tuple[int, ...]):
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (30, 20), (200, 10, 60)).convert(mode).save(out, fmt)
    image = decode_image(out.getvalue(), f"x.{fmt}")
    assert image.shape == shape and image.dtype == np.uint8


def test_float_images_and_unknown_formats_are_refused():
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("F", (30, 20), 0.5).save(out, "TIFF")
    with pytest.raises(ImageReadError, match="unsupported pixel format 'F', 32-bit floating"):
        decode_image(out.getvalue(), "f.tif")
    # three channels of floats: Pillow names no mode for them; not "a corrupt header"
    float_rgb = cv2.imencode(".tiff", np.full((20, 30, 3), 0.5, np.float32))[1].tobytes()
    with pytest.raises(ImageReadError, match=r"^rgb\.tif: unsupported TIFF pixel format \("):
        decode_image(float_rgb, "rgb.tif")
    out = io.BytesIO()
    Image.new("RGB", (30, 20)).save(out, "GIF")
    with pytest.raises(ImageReadError, match="not a PNG, JPEG, BMP, TIFF or WebP file"):
        decode_image(out.getvalue(), "a.gif")


def test_a_file_larger_than_any_image_within_the_limit_is_not_read(tmp_path: Path):
    path = tmp_path / "big.png"
    with path.open("wb") as f:
        f.truncate(max_file_bytes(10) + 1)  # sparse: nothing is written
    with pytest.raises(ImageReadError, match="larger than any image of at most"):
        read_image(path, max_pixels=10)


def test_grey_levels_and_source_files(tmp_path: Path):
    image = np.array([[0, 17, 200, 17]], np.uint8)
    assert grey_levels(image).tolist() == [0, 17, 200]
    assert source_files(tmp_path) == [] and source_files(str(tmp_path / "*.png")) == []
    assert source_files(tmp_path / "a.png") == [tmp_path / "a.png"]  # reported when read


@pytest.mark.parametrize(
    ("value", "limit"),
    [(None, MAX_IMAGE_PIXELS), ("30000000", 30_000_000), ("lots", MAX_IMAGE_PIXELS),
     ("0", MAX_IMAGE_PIXELS)],
)  # fmt: skip
def test_the_configured_pixel_limit(value: str | None, limit: int, tmp_path: Path, monkeypatch):
    env = {} if value is None else {"SPRAYCV_MAX_IMAGE_PIXELS": value}
    assert configured_max_pixels(env) == limit
    monkeypatch.setenv("SPRAYCV_MAX_IMAGE_PIXELS", "100")  # read_image's default follows it
    path = _write(tmp_path / "a.png", np.zeros((20, 30), np.uint8))
    with pytest.raises(ImageReadError, match=r"over the limit of 0\.0001 MP.*SPRAYCV_MAX_IMAGE"):
        read_image(path)


def _tagged_jpeg(path: Path, stored: np.ndarray, orientation: int) -> Path:
    """A JPEG of `stored` (H, W, 3) BGR pixels with an EXIF orientation tag, as a phone
    writes a photo taken in portrait (the sensor's landscape pixels plus a tag)."""
    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = orientation  # Orientation
    Image.fromarray(stored[..., ::-1]).save(path, quality=95, exif=exif.tobytes())
    return path


# how a viewer turns the stored pixels upright for each EXIF orientation
UPRIGHT = {
    1: lambda a: a,
    3: lambda a: cv2.rotate(a, cv2.ROTATE_180),
    6: lambda a: cv2.rotate(a, cv2.ROTATE_90_CLOCKWISE),
    8: lambda a: cv2.rotate(a, cv2.ROTATE_90_COUNTERCLOCKWISE),
}


@pytest.mark.parametrize("orientation", sorted(UPRIGHT))
def test_a_photo_is_read_upright_as_its_exif_tag_says(tmp_path: Path, orientation: int):
    """As every viewer and LabelMe show it, so that labels drawn there fit its pixels."""
    stored = np.zeros((60, 90, 3), np.uint8)
    stored[5:20, 5:40] = (0, 0, 255)  # a red block in the stored top-left corner
    path = _tagged_jpeg(tmp_path / "photo.jpg", stored, orientation)
    upright = UPRIGHT[orientation](stored)
    image = read_image(path)
    assert image.shape == upright.shape
    assert np.abs(image.astype(int) - upright).mean() < 4  # JPEG noise only
    as_stored = decode_image(path.read_bytes(), "photo.jpg", exif_orientation=False)
    assert as_stored.shape == stored.shape
