"""spraycv.runtime.zoom: a second look where the spray fills a small part of the frame."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from spraycv.runtime.predictor import ModulePredictor
from spraycv.runtime.processing import ModelIO
from spraycv.runtime.zoom import MAX_ZOOM, paste_apexes, paste_mask, zoom_box


def _mask(h: int, w: int, box: tuple[int, int, int, int] | None) -> np.ndarray:
    mask = np.zeros((h, w), np.uint8)
    if box is not None:
        mask[box[0] : box[1], box[2] : box[3]] = 1
    return mask


@pytest.mark.parametrize(
    ("shape", "spray", "below", "expected"),
    [
        ((400, 400), None, 0.5, None),  # nothing found: nothing to look at again
        ((400, 400), (100, 300, 100, 300), 0.5, None),  # 200 px, 340 with margins: large
        ((400, 400), (190, 210, 190, 210), 0.5, (150, 250, 150, 250)),  # at least 400 / 4
        ((400, 400), (150, 200, 160, 200), 0.5, (125, 225, 130, 230)),  # 50 px: 100 square
        ((400, 400), (0, 50, 350, 400), 0.5, (0, 100, 300, 400)),  # kept inside the image
        ((400, 800), (100, 200, 160, 200), 0.5, (65, 235, 95, 265)),  # 100 px -> 170
        ((400, 400), (100, 200, 160, 200), 0.4, None),  # 170 px square is not below 160
    ],
)
def test_zoom_box(shape, spray, below, expected):
    box = zoom_box(_mask(*shape, spray), below)
    assert box == expected
    if box is not None:
        y0, y1, x0, x1 = box
        assert y1 - y0 == x1 - x0 >= min(shape) / MAX_ZOOM
        assert y0 >= 0 and y1 <= shape[0] and x0 >= 0 and x1 <= shape[1]


def test_paste_replaces_the_box_only():
    mask = _mask(10, 10, (0, 10, 0, 10))
    out = paste_mask(mask, (2, 5, 3, 6), np.zeros((3, 3), np.uint8))
    assert out.sum() == 100 - 9 and mask.sum() == 100  # the input is left as it was
    points, heat = paste_apexes(
        np.array([[1.0, 1.0], [4.0, 3.0]]), np.array([0.9, 0.8]), (2, 5, 3, 6),
        np.array([[0.5, 1.5]]), np.array([0.7]),
    )  # fmt: skip
    np.testing.assert_allclose(points, [[1.0, 1.0], [3.5, 3.5]])  # (4, 3) was in the box
    np.testing.assert_allclose(heat, [0.9, 0.7])
    assert paste_apexes(np.zeros((0, 2)), None, (0, 1, 0, 1), np.zeros((0, 2)), None)[1] is None


class Brightness(torch.nn.Module):
    """A real if tiny network: bright pixels are spray (logit > 0 above mid-grey)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.mean(dim=1, keepdim=True) * 8.0).float()


def test_the_predictor_reads_a_small_spray_again_in_its_square():
    """The frame, then the square around what it found, read at the network's input size
    and pasted back; a predictor without zoom reads the frame once."""
    once = ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3, resize="keep_aspect")
    image = np.zeros((512, 512, 3), np.uint8)
    image[200:230, 250:262] = 255  # a small bright plume: 30 px of 512
    (first,) = ModulePredictor(Brightness(), once).predict([image])
    box = zoom_box(first, 0.5)
    assert box == (151, 279, 192, 320)  # 28 px found: the 128 px square (512 / 4)
    predictor = ModulePredictor(Brightness(), replace(once, zoom_below=0.5))
    seen: list[tuple[int, ...]] = []
    infer = predictor.infer
    predictor.infer = lambda batch: seen.append(batch.shape) or infer(batch)  # records only
    (mask,) = predictor.predict([image])
    assert seen == [(1, 3, 64, 64), (1, 3, 64, 64)]
    (crop,) = ModulePredictor(Brightness(), once).predict([image[151:279, 192:320]])
    np.testing.assert_array_equal(mask[151:279, 192:320], crop)
    np.testing.assert_array_equal(mask[:151], first[:151])  # outside the box: the first pass
    truth = np.zeros((512, 512), bool)
    truth[200:230, 250:262] = True
    iou = [np.sum(m.astype(bool) & truth) / np.sum(m.astype(bool) | truth) for m in (first, mask)]
    assert iou[1] > iou[0]  # the second look draws the small plume closer to its edge


def test_a_flat_frame_is_not_shown_to_the_network():
    """A black frame has no spray: an empty mask, no apexes, and no network call for it."""
    io = ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3, apex_threshold=0.5, zoom_below=0.5)
    predictor = ModulePredictor(Brightness(), io)
    seen: list[tuple[int, ...]] = []
    infer = predictor.infer
    predictor.infer = lambda batch: seen.append(batch.shape) or infer(batch)  # records only
    lit = np.zeros((128, 128, 3), np.uint8)
    lit[40:100, 60:70] = 255
    black, spray = predictor.segment([np.zeros((128, 128, 3), np.uint8), lit])
    assert seen[0] == (1, 3, 64, 64)  # the lit frame alone
    assert not black.mask.any() and black.apexes.shape == (0, 2)
    assert spray.mask.any()
