from __future__ import annotations

import base64
import json
import pickle
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from spraycv.data.formats import FORMATS, detect_format, load_samples
from spraycv.data.formats.coco import decode_rle_string, mask_to_rle, rle_to_mask
from spraycv.data.formats.labelme import mask_to_polygons, write_labelme
from spraycv.data.sample import DataError

H, W = 24, 32


def _img(path: Path, h: int = H, w: int = W) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    assert cv2.imwrite(str(path), rng.integers(0, 255, (h, w, 3), dtype=np.uint8))
    return path


def _mask(path: Path, mask: np.ndarray, scale: int = 255) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), (mask * scale).astype(np.uint8))
    return path


def _square(h: int = H, w: int = W) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    m[5:15, 8:20] = 1
    return m


def _json(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    return path


def _load_all(path: Path, fmt: str = "auto", **kw) -> list[tuple[np.ndarray, np.ndarray]]:
    return [s.load() for s in load_samples(path, fmt, **kw)]


def _runs(mask: np.ndarray) -> list[int]:
    """Column-major run lengths, starting with background (computed independently)."""
    flat, runs, value, n = mask.T.ravel(), [], 0, 0
    for v in flat:
        if v == value:
            n += 1
        else:
            runs.append(n)
            value, n = v, 1
    return [*runs, n]


def _coco(tmp_path: Path, anns: list[dict], h: int = H, w: int = W) -> Path:
    _img(tmp_path / "images" / "a.jpg", h, w)
    cats = [{"id": 1, "name": "spray"}, {"id": 2, "name": "nozzle"}]
    for i, ann in enumerate(anns):
        ann.setdefault("id", i + 1)
        ann.setdefault("image_id", 7)
        ann.setdefault("category_id", 1)
    images = [{"id": 7, "file_name": "a.jpg", "width": W, "height": H}]
    return _json(
        tmp_path / "annotations" / "instances.json",
        {"images": images, "annotations": anns, "categories": cats},
    )


def _labelme(tmp_path: Path, shapes: list[dict], **extra) -> Path:
    _img(tmp_path / "images" / "a.png")
    content = {"version": "5.5.0", "shapes": shapes, "imagePath": "../images/a.png"}
    content |= {"imageHeight": H, "imageWidth": W, "imageData": None} | extra
    return _json(tmp_path / "labels" / "a.json", content)


def _poly(points: list[list[float]], label: str = "spray", kind: str = "polygon") -> dict:
    return {"label": label, "points": points, "shape_type": kind}


# --- folder -----------------------------------------------------------------------------


def test_folder_split_layout(tmp_path: Path) -> None:
    _img(tmp_path / "images" / "b.jpg")
    _mask(tmp_path / "masks" / "b.png", _square())
    _img(tmp_path / "images" / "a.png")
    _mask(tmp_path / "masks" / "a.png", _square(), scale=1)  # 0/1 masks too
    assert detect_format(tmp_path) == "folder"
    samples = load_samples(tmp_path)
    assert [s.id for s in samples] == ["a", "b"]
    for image, mask in (s.load() for s in samples):
        assert image.shape == (H, W, 3) and image.dtype == np.uint8
        assert mask.dtype == np.uint8
        np.testing.assert_array_equal(mask, _square())


def test_folder_flat_layout(tmp_path: Path) -> None:
    _img(tmp_path / "x.jpg")
    _mask(tmp_path / "x_mask.png", _square())
    assert detect_format(tmp_path) == "folder"
    [(_, mask)] = _load_all(tmp_path)
    np.testing.assert_array_equal(mask, _square())


# --- COCO -------------------------------------------------------------------------------


def test_coco_polygon_and_both_rles_are_ored(tmp_path: Path) -> None:
    rect = [2, 3, 10, 3, 10, 8, 2, 8]  # pixel centres; the outline pixels are included
    m1 = np.zeros((H, W), np.uint8)
    m1[12:20, 4:9] = 1
    m2 = np.zeros((H, W), np.uint8)
    m2[1:6, 20:30] = 1
    path = _coco(
        tmp_path,
        [
            {"segmentation": [rect]},
            {"segmentation": {"size": [H, W], "counts": _runs(m1)}, "iscrowd": 1},
            {"segmentation": mask_to_rle(m2), "iscrowd": 1},
            {"segmentation": [[0, 0, 5, 0, 5, 5]], "category_id": 2},
        ],
    )
    assert detect_format(path) == "coco" and detect_format(tmp_path) == "coco"
    expected = m1 | m2
    expected[3:9, 2:11] = 1
    [(_, mask)] = _load_all(tmp_path, labels=["spray"])
    np.testing.assert_array_equal(mask, expected)
    [(_, everything)] = _load_all(path)
    assert everything.sum() > mask.sum()


@pytest.mark.parametrize(
    ("text", "counts"),
    [("324", [3, 2, 4]), ("354L", [3, 5, 4, 1]), ("T3`0", [100, 16])],  # hand-encoded
)
def test_rle_string_decoding(text: str, counts: list[int]) -> None:
    assert decode_rle_string(text) == counts


def test_rle_round_trip() -> None:
    rng = np.random.default_rng(1)
    mask = (rng.random((17, 23)) > 0.6).astype(np.uint8)
    mask[0, 0] = 1  # a mask starting with foreground needs a leading zero run
    rle = mask_to_rle(mask)
    assert isinstance(rle["counts"], str)
    np.testing.assert_array_equal(rle_to_mask(rle), mask)
    np.testing.assert_array_equal(rle_to_mask({"size": [17, 23], "counts": _runs(mask)}), mask)


def test_coco_unknown_category_lists_valid(tmp_path: Path) -> None:
    path = _coco(tmp_path, [{"segmentation": [[0, 0, 5, 0, 5, 5]]}])
    with pytest.raises(DataError, match=r"unknown categories \['droplet'\]; valid: spray"):
        load_samples(path, labels=["droplet"])


# --- LabelMe ----------------------------------------------------------------------------


def test_labelme_shapes_and_relative_image_path(tmp_path: Path) -> None:
    shapes = [
        _poly([[2, 2], [10, 2], [10, 6]]),
        _poly([[20, 4], [25, 9]], kind="rectangle"),
        _poly([[15, 17], [15, 20]], kind="circle"),
        _poly([[0, 20], [4, 23], [0, 23]], label="nozzle"),
        _poly([[1, 1]], kind="point"),  # no area: ignored
    ]
    path = _labelme(tmp_path, shapes)
    assert detect_format(path) == "labelme" and detect_format(path.parent) == "labelme"
    [(image, mask)] = _load_all(path.parent, labels=["spray"])
    assert image.shape == (H, W, 3)
    assert mask[2, 2] and mask[6, 10] and not mask[6, 2]  # triangle
    assert mask[4:10, 20:26].all() and mask.sum() < H * W  # rectangle, inclusive
    assert mask[17, 15] and mask[17, 12] and not mask[14, 12]  # disc of radius 3
    assert not mask[22, 1]  # the "nozzle" shape is filtered out
    [(_, everything)] = _load_all(path)
    assert everything[22, 1]


def test_labelme_embedded_image_data(tmp_path: Path) -> None:
    _, png = cv2.imencode(".png", np.full((H, W, 3), 200, np.uint8))
    data = base64.b64encode(png.tobytes()).decode()
    path = _json(
        tmp_path / "b.json",
        {"shapes": [_poly([[1, 1], [9, 1], [9, 9]])], "imagePath": "gone.png", "imageData": data},
    )
    [(image, mask)] = _load_all(path)
    assert (image == 200).all() and mask[1, 5] == 1


def test_mask_polygons_labelme_round_trip(tmp_path: Path) -> None:
    h, w = 120, 160
    mask = np.zeros((h, w), np.uint8)
    cone = np.array([[80, 10], [20, 110], [140, 110]], np.int32)  # a spray cone
    cv2.fillPoly(mask, [cone], 1)
    cv2.ellipse(mask, (30, 30), (12, 8), 20, 0, 360, 1, -1)  # a second region
    polygons = mask_to_polygons(mask, tolerance_px=1.0)
    assert len(polygons) == 2 and all(p.shape[1] == 2 and len(p) >= 3 for p in polygons)
    image = _img(tmp_path / "images" / "r.jpg", h, w)
    content = write_labelme(tmp_path / "labels" / "r.json", image, polygons, (h, w))
    assert content["imagePath"] == "../images/r.jpg" and content["version"].startswith("5.")
    [(_, back)] = _load_all(tmp_path / "labels" / "r.json")
    iou = (mask & back).sum() / (mask | back).sum()
    assert iou >= 0.99


def test_samples_pickle_for_dataloader_workers(tmp_path: Path) -> None:
    path = _labelme(tmp_path, [_poly([[2, 2], [10, 2], [10, 6]])])
    samples = pickle.loads(pickle.dumps(load_samples(path)))
    assert samples[0].load()[1].sum() > 0


# --- errors -----------------------------------------------------------------------------


def _missing_mask(tmp: Path) -> Path:
    _img(tmp / "images" / "a.jpg")
    (tmp / "masks").mkdir()
    return tmp


def _unreadable_mask(tmp: Path) -> Path:
    _img(tmp / "images" / "a.jpg")
    (tmp / "masks").mkdir()
    (tmp / "masks" / "a.png").write_bytes(b"not a png")
    return tmp


def _size_mismatch(tmp: Path) -> Path:
    _img(tmp / "images" / "a.jpg")
    _mask(tmp / "masks" / "a.png", _square(H + 1, W))
    return tmp


def _bad_json(tmp: Path, name: str) -> Path:
    (tmp / name).write_text('{"images": [')
    return tmp / name


ERRORS: list[tuple[str, Callable[[Path], Path], str, str]] = [
    ("missing mask", _missing_mask, "auto", r"mask missing: .*a\.png: no such file"),
    ("unreadable mask", _unreadable_mask, "auto", "mask unreadable: .*not a readable image"),
    ("size mismatch", _size_mismatch, "auto", r"mask/image size mismatch: .* is 32x25 .* 32x24"),
    ("empty folder", lambda tmp: tmp, "auto", "empty folder"),
    ("empty folder fmt", lambda tmp: tmp, "folder", "empty folder: no images found"),
    ("unknown format", lambda tmp: tmp, "voc", r"unknown format 'voc'; valid: auto, folder, coco"),
    ("malformed coco", lambda tmp: _bad_json(tmp, "c.json"), "coco", r"malformed JSON \(line 1"),
    ("malformed labelme", lambda tmp: _bad_json(tmp, "l.json").parent, "labelme", "malformed"),
    (
        "coco 2-point polygon",
        lambda tmp: _coco(tmp, [{"segmentation": [[1, 1, 5, 5]]}]),
        "auto",
        "annotation 1: polygon 0 has 2 points",
    ),
    (
        "labelme 2-point polygon",
        lambda tmp: _labelme(tmp, [_poly([[1, 1], [5, 5]])]),
        "auto",
        r"shapes\[0\] \('spray'\): polygon 0 has 2 points \(needs at least 3\)",
    ),
    (
        "rle size",
        lambda tmp: _coco(tmp, [{"segmentation": {"size": [H, W + 1], "counts": [H * (W + 1)]}}]),
        "auto",
        "RLE size 33x24 does not match the image size 32x24",
    ),
    (
        "rle counts",
        lambda tmp: _coco(tmp, [{"segmentation": {"size": [H, W], "counts": [5, 3]}}]),
        "auto",
        "RLE counts .* do not cover",
    ),
    (
        "coco declared size",
        lambda tmp: _coco(tmp, [], h=H + 2),
        "auto",
        "mask/image size mismatch: .* declares 32x24 but the image is 32x26",
    ),
    (
        "labelme declared size",
        lambda tmp: _labelme(tmp, [], imageHeight=H + 2),
        "auto",
        "mask/image size mismatch: .* declares 32x26 but the image is 32x24",
    ),
    (
        "labelme shape type",
        lambda tmp: _labelme(tmp, [_poly([[1, 1], [5, 5]], kind="blob")]),
        "auto",
        "unknown shape_type 'blob'; valid: polygon, rectangle, circle",
    ),
]


@pytest.mark.parametrize(
    ("build", "fmt", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_data_errors(tmp_path: Path, build: Callable[[Path], Path], fmt: str, message: str) -> None:
    path = build(tmp_path)
    with pytest.raises(DataError, match=message):
        _load_all(path, fmt)


def test_format_table() -> None:
    assert set(FORMATS) == {"folder", "coco", "labelme"}


def test_a_labelme_file_drawn_on_a_portrait_phone_photo_fits_it(tmp_path: Path) -> None:
    """A phone stores a portrait photo as landscape pixels plus an EXIF tag; LabelMe shows
    it upright and its polygons and size are upright. The loaded image is upright too, and
    the polygon covers the block the photo shows there."""
    from PIL import Image

    stored = np.zeros((60, 90, 3), np.uint8)
    stored[5:20, 5:40] = 255  # top-left when stored; top-right once turned upright
    (tmp_path / "images").mkdir()
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to view
    Image.fromarray(stored).save(tmp_path / "images" / "p.jpg", quality=95, exif=exif.tobytes())
    shapes = [_poly([[40.0, 5.0], [54.0, 5.0], [54.0, 39.0], [40.0, 39.0]])]  # upright (x, y)
    content = {"version": "5.5.0", "shapes": shapes, "imagePath": "../images/p.jpg"}
    content |= {"imageHeight": 90, "imageWidth": 60, "imageData": None}
    _json(tmp_path / "labels" / "p.json", content)
    (sample,) = load_samples(tmp_path / "labels", "labelme")
    image, mask = sample.load()
    assert image.shape == (90, 60, 3) and mask.shape == (90, 60)
    assert image[mask > 0].mean() > 200 and image[mask == 0].mean() < 40
