"""Classical threshold segmentation: polarity, methods, morphology, input errors."""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np
import pytest

from spraycv.config.segment import ClassicalSegmenterConfig
from spraycv.geometry import measure_cones
from spraycv.geometry.analytic import WedgeSpec, draw_wedge
from spraycv.segment import ImageError, detect_polarity, segment_classical

SIZE = 256


def _truth() -> np.ndarray:
    spec = WedgeSpec((128.0, 30.0), 0.0, 25.0, 25.0, 190.0, ragged=0.03, flatness=0.4)
    return draw_wedge((SIZE, SIZE), spec)


def _image(polarity: str, seed: int = 0, droplets: bool = True) -> np.ndarray:
    """A lab-like photo of the truth wedge: textured spray, noisy, a slow background ramp."""
    rng = np.random.default_rng(seed)
    truth = _truth().astype(np.float32)
    spray = truth * rng.uniform(0.6, 1.0, truth.shape).astype(np.float32)
    spray = cv2.GaussianBlur(spray, (0, 0), 1.0)
    if droplets:
        for _ in range(60):  # loose droplets around the envelope
            x, y = rng.uniform(40, 216), rng.uniform(60, 240)
            cv2.circle(spray, (int(x), int(y)), int(rng.integers(1, 3)), 0.8, -1)
    ramp = np.linspace(0, 20, SIZE, dtype=np.float32)[None, :]
    img = 40 + ramp + 150 * spray if polarity == "bright" else 210 - ramp - 140 * spray
    img += rng.normal(0, 4, img.shape).astype(np.float32)
    grey = np.clip(img, 0, 255).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(bool), b.astype(bool)
    return float((a & b).sum() / max((a | b).sum(), 1))


@pytest.mark.parametrize("polarity", ["bright", "dark"])
def test_front_and_back_lit_sprays(polarity: str) -> None:
    img = _image(polarity)
    assert detect_polarity(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)) == polarity
    mask = segment_classical(img)
    assert mask.dtype == np.uint8 and set(np.unique(mask)) <= {0, 1}
    assert mask.shape == (SIZE, SIZE)
    assert _iou(mask, _truth()) >= 0.85


@pytest.mark.parametrize("method", ["otsu", "triangle", "adaptive", "fixed"])
def test_every_threshold_method_finds_the_spray(method: str) -> None:
    cfg = ClassicalSegmenterConfig(method=method, fixed_threshold=110)
    assert _iou(segment_classical(_image("bright", droplets=False), cfg), _truth()) >= 0.7


@pytest.mark.parametrize("polarity", ["bright", "dark"])
def test_forced_polarity(polarity: str) -> None:
    img = _image(polarity)
    good = segment_classical(img, ClassicalSegmenterConfig(polarity=polarity))
    assert _iou(good, _truth()) >= 0.85


@pytest.mark.parametrize(
    "convert",
    [
        lambda im: im,
        lambda im: cv2.cvtColor(im, cv2.COLOR_BGR2GRAY),
        lambda im: cv2.cvtColor(im, cv2.COLOR_BGR2GRAY)[:, :, None],
        lambda im: cv2.cvtColor(im, cv2.COLOR_BGR2BGRA),
    ],
    ids=["bgr", "grey", "grey1", "bgra"],
)
def test_accepted_layouts_agree(convert: Callable[[np.ndarray], np.ndarray]) -> None:
    img = _image("bright")
    ref = segment_classical(img)
    np.testing.assert_array_equal(segment_classical(convert(img)), ref)


def test_mask_is_filled_and_free_of_specks() -> None:
    mask = segment_classical(_image("bright", seed=3))
    n, _ = cv2.connectedComponents(mask)
    assert n == 2  # background + one plume
    holes = cv2.floodFill(1 - mask.copy(), None, (0, 0), 0)[1]
    assert holes.sum() == 0


def test_flat_image_gives_an_empty_mask() -> None:
    rng = np.random.default_rng(0)
    flat = np.clip(120 + rng.normal(0, 2, (SIZE, SIZE)), 0, 255).astype(np.uint8)
    assert segment_classical(flat).sum() == 0
    assert measure_cones(segment_classical(flat))[0].has("no_spray")


def test_straight_bars_are_dropped() -> None:
    img = _image("bright", droplets=False)
    cv2.rectangle(img, (0, 5), (SIZE - 1, 14), (230, 230, 230), -1)  # a boom pipe
    mask = segment_classical(img)
    assert mask[8:12, :].sum() < 0.1 * SIZE * 4
    kept = segment_classical(img, ClassicalSegmenterConfig(drop_bars=False))
    assert kept[8:12, :].sum() > 0.9 * SIZE * 4


def test_segment_then_measure() -> None:
    m = measure_cones(segment_classical(_image("dark", seed=5)))
    assert len(m) == 1
    assert abs(m[0].included_angle_deg - 50) <= 2.0
    assert math.hypot(m[0].apex[0] - 128, m[0].apex[1] - 30) <= 6


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (np.zeros((64, 64), np.float32), "image dtype float32 is not supported, expected uint8"),
        (np.zeros((64, 64), np.uint16), "convert it to 8 bits first"),
        (np.zeros((64, 64, 2), np.uint8), "got shape (64, 64, 2)"),
        (np.zeros(64, np.uint8), "image must be (H, W) grey or (H, W, 3) BGR"),
        (np.zeros((4, 64, 64, 3), np.uint8), "got shape (4, 64, 64, 3)"),
        (np.zeros((4, 4), np.uint8), "too small"),
        ([[0, 1]], "numpy array"),
    ],
)
def test_bad_images_name_the_problem(image: object, message: str) -> None:
    with pytest.raises(ImageError) as err:
        segment_classical(image)  # type: ignore[arg-type]
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "kmeans"}, "method"),
        ({"polarity": "up"}, "polarity"),
        ({"close_frac": -1}, "close_frac"),
        ({"threshold": 3}, "Extra inputs are not permitted"),
    ],
)
def test_segmenter_config_rejects_bad_values(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ClassicalSegmenterConfig(**kwargs)
