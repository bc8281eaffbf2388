"""Tiles for far views (experiments rows 152-153): where a boom of small sprays spans the
frame, the frame is read again in overlapping tiles, and only the trusted plumes the first
reading did not read are taken from them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from looks import counted_looks

from spraycv.geometry import ConeMeasurement
from spraycv.geometry.types import QualityFlag
from spraycv.measure import Measurer, Reading, saw_nothing, with_new_plumes
from spraycv.runtime.predictor import ModulePredictor
from spraycv.runtime.processing import ModelIO
from spraycv.runtime.zoom import TILE_SHARE, merge_peaks, tile_boxes, wants_tiles


@pytest.mark.parametrize("shape", [(512, 512), (720, 1280), (1024, 1024), (300, 1000), (64, 40)])
def test_tiles_are_squares_that_cover_the_frame(shape):
    boxes = tile_boxes(shape)
    covered = np.zeros(shape, bool)
    side = round(TILE_SHARE * min(shape))
    for y0, y1, x0, x1 in boxes:
        assert (y1 - y0, x1 - x0) == (side, side)
        assert y0 >= 0 and y1 <= shape[0] and x0 >= 0 and x1 <= shape[1]
        covered[y0:y1, x0:x1] = True
    assert covered.all()
    if shape[0] == shape[1]:
        assert len(boxes) == 4  # 2 x 2 on a square frame


@pytest.mark.parametrize(
    ("points", "heat", "radius", "kept"),
    [
        ([[0, 0], [5, 0], [50, 0]], [0.3, 0.9, 0.5], 10, [1, 2]),  # the hotter of a close pair
        ([[0, 0], [5, 0], [50, 0]], None, 10, [0, 2]),  # heat unknown: the first
        ([[0, 0], [20, 0]], [0.5, 0.4], 10, [0, 1]),  # far enough apart: both
        (np.zeros((0, 2)), np.zeros(0), 10, []),
    ],
)
def test_peaks_of_overlapping_tiles_merge(points, heat, radius, kept):
    merged, strength = merge_peaks(np.asarray(points, float), heat, radius)
    np.testing.assert_array_equal(merged, np.asarray(points, float).reshape(-1, 2)[kept])
    if heat is not None:
        np.testing.assert_array_equal(strength, np.asarray(heat)[kept])


SHAPE = (1000, 1000)  # short: 0.3 x 1000 = 300 px


@pytest.mark.parametrize(
    ("apexes", "lengths", "untrusted", "peaks", "expected"),
    [
        ([], [], 0, None, False),  # nothing read, nothing marked: nothing to look for
        ([], [], 0, [[500, 500]], True),  # a peak nothing explains
        ([], [], 1, None, True),  # only an untrusted reading
        ([[100, 100]], [200], 0, [[102, 101]], False),  # short, and every peak explained
        ([[100, 100]], [200], 0, [[102, 101], [600, 100]], True),  # a lone peak
        ([[100, 100]], [200], 1, [[102, 101]], True),  # an untrusted reading
        ([[100, 100]], [400], 1, [[600, 100]], False),  # a long trusted plume: not far
        ([[100, 100], [300, 100]], [150, 320], 0, [[600, 100]], False),  # one long
    ],
)
def test_a_frame_takes_tiles_when_small_sprays_are_left_unexplained(
    apexes, lengths, untrusted, peaks, expected
):
    args = (np.array(apexes, float).reshape(-1, 2), np.array(lengths, float), untrusted)
    got = wants_tiles(SHAPE, *args, None if peaks is None else np.array(peaks, float), 0.3)
    assert got is expected


def cone(index: int, apex: tuple[float, float], angle: float, **kw) -> ConeMeasurement:
    fields = {"axis": (0.0, 1.0), "length_px": 100.0, "confidence": 0.9, **kw}
    return ConeMeasurement(index, apex=apex, included_angle_deg=angle,
                           half_angle_left_deg=angle / 2, half_angle_right_deg=angle / 2,
                           **fields)  # fmt: skip


def test_only_the_plumes_the_first_reading_did_not_trust_come_from_the_tiles():
    """A nozzle read and trusted stays as it was read first (not moved by its tiled
    reading); a nozzle the first reading flagged takes its trusted tiled reading and that
    plume's component of the tiled mask; the tiles' untrusted readings add nothing."""
    first_mask = np.zeros((400, 400), np.uint8)
    first_mask[100:200, 90:110] = 1
    tiled_mask = first_mask.copy()
    tiled_mask[100:200, 290:310] = 1  # the plume only the tiles see
    tiled_mask[300:320, 10:20] = 1  # a blob no new plume claims
    kept = cone(0, (100.0, 100.0), 40.0)
    flagged = cone(1, (300.0, 100.0), 70.0, unreliable="low_edge_contrast", confidence=0.1)
    first = Reading(first_mask, None, [kept, flagged])
    tiled = Reading(tiled_mask, None, [
        cone(0, (101.0, 100.0), 42.0),  # the same nozzle as `kept`, read a little differently
        cone(1, (300.5, 100.0), 50.0),  # the flagged nozzle, now trusted
        cone(2, (15.0, 300.0), 30.0, unreliable="no_spray_in_crop", confidence=0.0),
    ])  # fmt: skip
    out = with_new_plumes(first, tiled, None)
    assert [m.included_angle_deg for m in out.measurements] == [40.0, 50.0]
    assert [m.index for m in out.measurements] == [0, 1]
    assert out.measurements[0].apex == kept.apex
    expected = first_mask.copy()
    expected[100:200, 290:310] = 1
    np.testing.assert_array_equal(out.mask, expected)
    assert (
        with_new_plumes(first, replace(tiled, measurements=tiled.measurements[:1]), None) is first
    )


def test_the_tiles_give_one_no_plume_reading_or_their_plumes():
    """A frame whose first reading found nothing (one "no plume" reading without apex):
    tiles that find nothing leave that one reading, and tiles that find a plume replace it
    (neither a second "no plume" row nor one beside a plume)."""
    empty = np.zeros((400, 400), np.uint8)
    nothing = ConeMeasurement(0, flags=(QualityFlag.NO_SPRAY,))
    first = Reading(empty, None, [nothing])
    assert with_new_plumes(first, Reading(empty, None, [nothing]), None) is first
    seen = empty.copy()
    seen[100:200, 90:110] = 1
    plume = cone(0, (100.0, 100.0), 30.0)
    out = with_new_plumes(first, Reading(seen, None, [plume]), None)
    assert [m.included_angle_deg for m in out.measurements] == [30.0]
    np.testing.assert_array_equal(out.mask, seen)


@pytest.mark.parametrize("level", [0, 128, 255])
@pytest.mark.parametrize("shape", [(512, 512), (480, 640)])
def test_a_flat_frame_reads_as_one_no_plume(shipped_pipeline, level, shape):
    """A capped lens, a grey card, a blown-out frame: one "no plume" row, not one per look."""
    reading = shipped_pipeline(np.full((*shape, 3), level, np.uint8))
    assert [m.flags for m in reading.measurements] == [(QualityFlag.NO_SPRAY,)]
    assert not reading.mask.any()


class Brightness(torch.nn.Module):
    """Logits from brightness: a lit pixel is spray."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.mean(dim=1, keepdim=True) * 8.0).float()


def test_the_tiled_look_reads_its_tiles_in_one_batch_and_unites_their_masks():
    """Six tiles cover a 200 x 300 frame; the four flat ones are not shown to the network
    (a flat frame has no spray), the two lit ones go in one batch."""
    io = ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3, resize="keep_aspect")
    predictor = ModulePredictor(Brightness(), io)
    image = np.zeros((200, 300, 3), np.uint8)
    image[20:60, 10:30] = image[150:190, 260:290] = 255  # lit at opposite corners
    seen: list[tuple[int, ...]] = []
    infer = predictor.infer
    predictor.infer = lambda batch: seen.append(batch.shape) or infer(batch)  # records only
    seg = predictor.tiled_look(image)
    assert len(tile_boxes(image.shape[:2])) == 6 and seen == [(2, 3, 64, 64)]
    assert seg.mask.shape == (200, 300)
    assert seg.mask[40, 20] and seg.mask[170, 275] and not seg.mask[100, 150]


def test_a_model_that_asks_for_no_tiles_keeps_its_reading():
    io = ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3)
    measurer = Measurer(ModulePredictor(Brightness(), io))
    reading = Reading(np.zeros((64, 64), np.uint8), np.array([[30.0, 30.0]]), [])
    assert measurer.with_tiles(np.zeros((64, 64, 3), np.uint8), reading) is reading


def test_the_tile_setting_travels_in_the_sidecar():
    io = ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3, zoom_below=0.5, tile_short=0.3)
    meta = {**io.to_sidecar(), "threshold": 0.5}
    assert ModelIO.from_sidecar(meta).tile_short == 0.3
    assert "tile_short" not in replace(io, tile_short=None).to_sidecar()


@pytest.mark.parametrize("search_when_nothing_seen", [True, False])
def test_a_frame_that_shows_nothing_is_searched_unless_told_not_to(
    shipped_pipeline, no_spray_frame, search_when_nothing_seen, monkeypatch
):
    """The tiled look finds far views' sprays that the first look misses whole, the turned
    looks sprays seen side-on; a daemon whose camera is idle turns them off for such frames
    (spraycv.stream.idle). Neither finds a plume where nothing sprays."""
    predictor = shipped_pipeline.segmenter
    calls = counted_looks(monkeypatch, predictor)
    measurer = replace(shipped_pipeline, search_when_nothing_seen=search_when_nothing_seen)
    reading = measurer(no_spray_frame)
    assert [m.flags for m in reading.measurements] == [(QualityFlag.NO_SPRAY,)]
    searched = int(search_when_nothing_seen)
    assert calls == {"tiled_look": searched, "turned_look": 3 * searched}


@pytest.mark.parametrize(
    ("apexes", "measurements", "expected"),
    [
        (None, [ConeMeasurement(0, flags=(QualityFlag.NO_SPRAY,))], True),
        (np.zeros((0, 2)), [ConeMeasurement(0, flags=(QualityFlag.NO_SPRAY,))], True),
        (np.array([[10.0, 10.0]]), [ConeMeasurement(0, flags=(QualityFlag.NO_SPRAY,))], False),
        (None, [ConeMeasurement(0, apex=(5.0, 5.0), flags=(QualityFlag.NO_SPRAY,))], False),
        (None, [cone(0, (100.0, 100.0), 30.0)], False),
    ],
)
def test_a_reading_that_saw_nothing(apexes, measurements, expected):
    reading = Reading(np.zeros((64, 64), np.uint8), apexes, measurements)
    assert saw_nothing(reading) is expected
