from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from spraycv.io.images import (
    ImageReadError,
    expand_sources,
    looks_like_mask,
    read_image,
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
