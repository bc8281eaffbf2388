"""mask_to_polygons keeps holes (keyhole cuts) so that LabelMe polygons fill back exactly."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from spraycv.data.formats._common import fill_polygons
from spraycv.data.formats.labelme import load_labelme, mask_to_polygons, write_labelme


def _ring() -> np.ndarray:
    m = np.zeros((60, 60), np.uint8)
    cv2.circle(m, (30, 30), 20, 1, -1)
    cv2.circle(m, (30, 30), 8, 0, -1)
    return m


def _stacked_holes() -> np.ndarray:
    """Two holes in the same columns: the lower one's cut ends on the upper one."""
    m = np.zeros((50, 40), np.uint8)
    m[5:45, 5:35] = 1
    m[10:16, 12:28] = 0
    m[25:32, 15:22] = 0
    return m


def _hole_below_a_notch() -> np.ndarray:
    """The pixel above a hole's top borders the outside: a zero-length cut."""
    m = np.zeros((30, 30), np.uint8)
    m[3:27, 3:27] = 1
    m[3:10, 14] = 0  # a notch from the top down to row 9
    m[11:18, 11:18] = 0  # the hole starts right under it, row 10 between them
    return m


def _island_in_a_hole() -> np.ndarray:
    m = np.zeros((60, 60), np.uint8)
    m[5:55, 5:55] = 1
    m[15:45, 15:45] = 0
    m[25:35, 22:38] = 1  # the island
    m[28:31, 27:31] = 0  # with its own hole
    return m


def _spikes_and_diagonals() -> np.ndarray:
    m = np.zeros((40, 40), np.uint8)
    m[10:30, 10:30] = 1
    m[2:10, 20] = 1  # a one-pixel-wide spike
    for k in range(6):  # a diagonal chain, 8-connected only
        m[30 + k, 30 + k] = 1
    m[15:20, 15:18] = 0  # a hole
    m[20, 18] = 0  # touching a second hole only at a corner
    m[21:25, 19:24] = 0
    return m


def _holes_at_the_border() -> np.ndarray:
    m = np.ones((30, 40), np.uint8)  # the region fills the image
    m[0:6, 10:14] = 0  # a bay open to the top
    m[10:15, 5:9] = 0
    m[10:20, 20:24] = 0
    return m


def _zero_area(mask: np.ndarray) -> np.ndarray:
    """The regions without area (a pixel, a one-pixel-wide line): no polygon can hold them."""
    count, labels = cv2.connectedComponents(mask, connectivity=8)
    out = np.zeros(mask.shape, bool)
    for k in range(1, count):
        region = (labels == k).astype(np.uint8)
        contour = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0][0]
        if cv2.contourArea(contour) == 0:
            out |= region > 0
    return out


def _ragged_spray(seed: int) -> np.ndarray:
    """A cone with a ragged edge and holes of 2 px and more, like a model's mask."""
    rng = np.random.default_rng(seed)
    m = np.zeros((160, 200), np.uint8)
    cv2.fillPoly(m, [np.array([[100, 5], [15, 150], [185, 150]], np.int32)], 1)
    noise = cv2.GaussianBlur(rng.random(m.shape).astype(np.float32), (0, 0), 1.2)
    edge = cv2.morphologyEx(m, cv2.MORPH_GRADIENT, np.ones((7, 7), np.uint8)) > 0
    m[edge & (noise > 0.55)] = 0  # bites out of the edge
    m[edge & (noise < 0.45)] = 1  # and droplets beyond it
    for x, y in rng.integers((30, 40), (170, 140), size=(25, 2)):
        cv2.circle(m, (int(x), int(y)), int(rng.integers(1, 4)), 0, -1)  # holes
    m[_zero_area(m)] = 0
    return m


CASES = {
    "ring": _ring(),
    "stacked_holes": _stacked_holes(),
    "hole_below_a_notch": _hole_below_a_notch(),
    "island_in_a_hole": _island_in_a_hole(),
    "spikes_and_diagonals": _spikes_and_diagonals(),
    "holes_at_the_border": _holes_at_the_border(),
    **{f"ragged_spray_{s}": _ragged_spray(s) for s in range(4)},
}


def _holes(mask: np.ndarray) -> int:
    _, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    return int((hierarchy[0][:, 3] >= 0).sum())


@pytest.mark.parametrize("name", list(CASES))
def test_exact_with_holes(name: str) -> None:
    mask = CASES[name]
    assert _holes(mask) >= 1
    polygons = mask_to_polygons(mask, tolerance_px=0, min_area_px=0)
    assert all(p.ndim == 2 and p.shape[1] == 2 and len(p) >= 3 for p in polygons)
    back = fill_polygons(mask.shape, polygons)
    assert np.array_equal(back, mask), f"{int((back != mask).sum())} pixels differ"


@pytest.mark.parametrize("seed", range(8))
def test_random_blobs_lose_only_zero_area_slivers(seed: int) -> None:
    rng = np.random.default_rng(seed)
    blur = cv2.GaussianBlur(rng.random((90, 120)).astype(np.float32), (0, 0), 1.5 + seed % 3)
    mask = (blur > 0.5).astype(np.uint8)
    back = fill_polygons(mask.shape, mask_to_polygons(mask, tolerance_px=0, min_area_px=0))
    assert not (back & ~mask.astype(bool)).any()  # nothing added
    assert np.array_equal((mask > 0) & (back == 0), _zero_area(mask))  # only slivers lost


@pytest.mark.parametrize(
    ("holes", "min_area_px", "expected_hole_pixels"),
    [
        (True, 4.0, {"pinhole": 1, "hole": 0}),  # a pinhole is filled, a real hole kept
        (True, 0.0, {"pinhole": 0, "hole": 0}),  # every hole kept
        (False, 4.0, {"pinhole": 1, "hole": 1}),  # outer outlines only
    ],
)
def test_hole_options(holes: bool, min_area_px: float, expected_hole_pixels: dict) -> None:
    mask = np.zeros((30, 30), np.uint8)
    mask[2:28, 2:28] = 1
    mask[6, 6] = 0  # pinhole: its outline encloses 2 px^2
    mask[12:18, 12:18] = 0
    back = fill_polygons(mask.shape, mask_to_polygons(mask, 0, min_area_px, holes=holes))
    assert back[6, 6] == expected_hole_pixels["pinhole"]
    assert back[12:18, 12:18].all() == bool(expected_hole_pixels["hole"])
    assert back[12:18, 12:18].any() == bool(expected_hole_pixels["hole"])


@pytest.mark.parametrize("tolerance_px", [0.0, 0.5, 1.0])
def test_fewer_vertices_with_a_tolerance(tolerance_px: float) -> None:
    mask = CASES["ragged_spray_0"]
    polygons = mask_to_polygons(mask, tolerance_px=tolerance_px, min_area_px=0)
    back = fill_polygons(mask.shape, polygons)
    iou = (mask & back).sum() / (mask | back).sum()
    exact = sum(len(p) for p in mask_to_polygons(mask, tolerance_px=0, min_area_px=0))
    vertices = sum(len(p) for p in polygons)
    print(f"tolerance {tolerance_px} px: {vertices} vertices (exact {exact}), IoU {iou:.4f}")
    assert vertices <= exact and iou >= (1.0 if tolerance_px == 0 else 0.95)


def test_labelme_file_round_trip_with_holes(tmp_path: Path) -> None:
    mask = CASES["island_in_a_hole"] | 0
    image = tmp_path / "a.png"
    cv2.imwrite(str(image), np.zeros((*mask.shape, 3), np.uint8))
    write_labelme(tmp_path / "a.json", image, mask_to_polygons(mask, 0), mask.shape)
    [sample] = load_labelme(tmp_path / "a.json")
    _, back = sample.load()
    assert np.array_equal(back, mask)
