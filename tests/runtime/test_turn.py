"""Quarter turns (experiments row 167): a frame whose sprays point sideways or up is read with
the network's look turned so that they point down, and then reads as the upright frame."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from repo_scripts import load_script

from spraycv.geometry.matching import match_to_truth
from spraycv.measure import Measurer, Reading
from spraycv.runtime.predictor import Segmentation
from spraycv.runtime.turn import points_back, turn_down, turn_map

SHAPE = (5, 8)  # not square: a turn swaps the sides
SAMPLES = Path(__file__).resolve().parents[2] / "data/samples/images"


@pytest.mark.parametrize("k", [0, 1, 2, 3, -1, 5])
def test_turn_map_follows_np_rot90_and_points_come_back(k):
    rng = np.random.default_rng(k % 4)
    points = np.stack([rng.integers(0, SHAPE[1], 6), rng.integers(0, SHAPE[0], 6)], axis=1)
    for x, y in points:
        image = np.zeros(SHAPE, np.uint8)
        image[y, x] = 1
        a, b = turn_map(k, SHAPE)
        xt, yt = np.rint(a @ [x, y] + b).astype(int)
        assert np.rot90(image, k)[yt, xt] == 1
        np.testing.assert_allclose(points_back([[xt, yt]], k, SHAPE), [[x, y]], atol=1e-9)


@pytest.mark.parametrize(
    ("axes", "k"),
    [
        ([[0.0, 1.0]], 0),  # down
        ([[0.6, 0.8], [-0.6, 0.8]], 0),  # a boom fanning out downwards
        ([[0.7, 0.7]], 0),  # 45 deg: closer to down than to the side (by rounding)
        ([[-1.0, 0.0]], 1),  # to the left: one counter-clockwise turn points it down
        ([[1.0, 0.1]], 3),  # to the right
        ([[0.1, -1.0], [-0.1, -1.0]], 2),  # up
        ([[1.0, 0.0], [-1.0, 0.0]], 0),  # both ways at once: no one direction to turn
        ([], 0),  # no plume
        ([[np.nan, np.nan], [-1.0, 0.0]], 1),  # a plume without an axis does not count
    ],
)
def test_turn_down_points_the_mean_axis_down(axes, k):
    assert turn_down(np.array(axes, np.float64).reshape(-1, 2)) == k
    if axes and k:
        u = np.nanmean(np.array(axes, np.float64), axis=0)
        assert (turn_map(k, (1, 1))[0] @ u)[1] > 0.7 * np.linalg.norm(u)


class WithoutTurn(Measurer):
    """The pipeline as it was before quarter turns."""

    def with_turn(self, image: np.ndarray, reading: Reading, tiled=None) -> Reading:
        return reading


def _trusted(reading: Reading) -> list[float]:
    return sorted(m.included_angle_deg for m in reading.measurements if m.reliable)


@pytest.mark.slow
@pytest.mark.parametrize("sample", ["000002", "000003"])
def test_a_turned_frame_reads_as_the_upright_one(shipped_pipeline, sample):
    """The bundled samples (sprays pointing down) turned sideways and upside down: the same
    plumes at the same angles, where the network's own look at a turned frame reads them
    0.5-0.7 deg apart."""
    image = cv2.imread(str(SAMPLES / f"{sample}.jpg"))
    upright = _trusted(shipped_pipeline(image))
    before = WithoutTurn(**{f.name: getattr(shipped_pipeline, f.name) for f in fields(Measurer)})
    apart = 0.0
    for k in (1, 2, 3):
        turned = np.ascontiguousarray(np.rot90(image, k))
        assert _trusted(shipped_pipeline(turned)) == pytest.approx(upright, abs=0.15)
        apart = max(apart, np.abs(np.subtract(_trusted(before(turned)), upright)).max())
    assert apart > 0.15  # what the turn is for: the network alone reads them apart


class TurnedLooks:
    """A segmenter whose turned look is given: it records the turns asked for."""

    def __init__(self, seen: Segmentation):
        self.seen, self.turns = seen, []

    def __call__(self, image: np.ndarray) -> np.ndarray:
        return self.seen.mask

    def turned_look(self, image: np.ndarray, k: int) -> Segmentation:
        self.turns.append(k)
        return self.seen


def _plume_pointing_up(shape: tuple[int, int] = (240, 240)) -> np.ndarray:
    """(H, W) uint8 mask of a 40 deg sector (a round front: one apex) from near the
    bottom, pointing up."""
    mask = np.zeros(shape, np.uint8)
    apex, length = np.array([120.0, 220.0]), 180.0
    front = [
        apex + length * np.array([np.sin(a), -np.cos(a)])
        for a in np.radians(np.linspace(-20, 20, 21))
    ]
    cv2.fillPoly(mask, [np.rint([apex, *front]).astype(np.int32)], 1)
    return mask


@pytest.mark.parametrize(
    ("first_trusted", "turned_sees", "taken"),
    [
        (True, "nothing", False),  # fewer trusted plumes
        (True, "the plume", True),
        (
            False,
            "nothing",
            False,
        ),  # none: the first mask stays (it was the better one on dim frames)
        (False, "the plume", True),  # an untrusted plume pointing up, trusted turned
    ],
)
def test_the_turned_look_is_taken_unless_it_trusts_fewer_plumes(first_trusted, turned_sees, taken):
    mask = _plume_pointing_up()
    image = cv2.cvtColor(mask * 200, cv2.COLOR_GRAY2BGR)
    apex, heat = np.array([[120.0, 220.0]]), np.array([0.9])  # as an apex head marks it
    nothing = Segmentation(np.zeros_like(mask), np.zeros((0, 2)), np.zeros(0))
    seen = Segmentation(mask, apex, heat) if turned_sees == "the plume" else nothing
    segmenter = TurnedLooks(seen)
    measurer = Measurer(segmenter)
    first = measurer.read_mask(mask, apex, image, heat)
    assert [m.reliable for m in first.measurements] == [True]
    if not first_trusted:
        flagged = [replace(m, unreliable="poor_fit") for m in first.measurements]
        first = Reading(first.mask, first.apexes, flagged)
    result = measurer.with_turn(image, first)
    # upside down: two quarter turns; where that trusts nothing either, the other turns
    assert segmenter.turns == ([2] if first_trusted or taken else [2, 1, 3])
    assert (result is not first) == taken
    assert len([m for m in result.measurements if m.reliable]) == int(first_trusted or taken)


class OneTurnSees(TurnedLooks):
    """`TurnedLooks` that sees its segmentation at one quarter turn only."""

    def __init__(self, seen: Segmentation, at: int):
        super().__init__(seen)
        self.at = at

    def turned_look(self, image: np.ndarray, k: int) -> Segmentation:
        self.turns.append(k)
        if k == self.at:
            return self.seen
        return Segmentation(np.zeros_like(self.seen.mask), np.zeros((0, 2)), np.zeros(0))


@pytest.mark.parametrize(
    ("search", "pointing", "turns", "taken"),
    [
        (True, "up", [2, 1, 3], True),
        (False, "up", [2], False),  # an idle camera's daemon does not search
        (True, "down", [], False),  # upright already: a turned look reads it worse
    ],
)
def test_where_nothing_is_trusted_the_other_turns_are_looked_at(search, pointing, turns, taken):
    # an untrusted reading read from a plume's far corner points back at its orifice, so
    # the turn it asks for can be the wrong one (heldout_hard 000001, experiments row 219)
    mask = _plume_pointing_up()
    if pointing == "down":
        mask = np.ascontiguousarray(mask[::-1])
    image = cv2.cvtColor(mask * 200, cv2.COLOR_GRAY2BGR)
    apex = np.array([[120.0, 220.0 if pointing == "up" else 19.0]])
    heat = np.array([0.9])
    segmenter = OneTurnSees(Segmentation(mask, apex, heat), at=1)
    measurer = Measurer(segmenter, search_when_nothing_seen=search)
    first = measurer.read_mask(mask, apex, image, heat)
    flagged = [replace(m, unreliable="poor_fit") for m in first.measurements]
    first = Reading(first.mask, first.apexes, flagged)
    result = measurer.with_turn(image, first)
    assert segmenter.turns == turns
    assert (result is not first) == taken
    assert sum(m.reliable for m in result.measurements) == int(taken)


class TiledAndTurned(TurnedLooks):
    """`TurnedLooks` with a tiled look that finds nothing new, counting its calls."""

    tiled_calls = 0

    def tiled_look(self, image: np.ndarray) -> Segmentation:
        self.tiled_calls += 1
        return Segmentation(np.zeros(image.shape[:2], np.uint8), np.zeros((0, 2)), np.zeros(0))


class AlwaysTiles(Measurer):
    """Every reading asks for tiles (as a far view's small sprays would)."""

    def _wants_tiles(self, reading: Reading, shape: tuple[int, int]) -> bool:
        return True


def test_a_turned_frame_that_takes_tiles_reads_them_once():
    """Both the first reading and the turned one ask for the tiles of the same upright
    image: the tiled look (about 190 ms a frame) runs once."""
    mask = _plume_pointing_up()
    image = cv2.cvtColor(mask * 200, cv2.COLOR_GRAY2BGR)
    apex, heat = np.array([[120.0, 220.0]]), np.array([0.9])
    segmenter = TiledAndTurned(Segmentation(mask, apex, heat))
    measurer = AlwaysTiles(segmenter)
    first = measurer.read_mask(mask, apex, image, heat)
    result = measurer.completed(image, first)
    assert segmenter.turns == [2] and result is not first  # the turned look was taken
    assert segmenter.tiled_calls == 1


def _third_drawer_frame(index: int) -> tuple[np.ndarray, list[dict]]:
    """Frame `index` of `python benchmarks/photo_sprays.py --seed 1` as that command stores
    it, and its nozzles' truth."""
    jpeg, _, record, _ = load_script("photo_sprays", "benchmarks").frame(1, index)
    return cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR), record["nozzles"]


@pytest.mark.slow
@pytest.mark.parametrize("index", [75, 100])
def test_a_spray_seen_side_on_that_the_upright_look_misses_is_found_turned(shipped_pipeline, index):
    """Single sprays pointing sideways, drawn by the third drawer (which the network never
    trained on): the upright look reads nothing at all, so no plume says which way to turn;
    the search of turned looks finds the one spray and reads it within 2.5 deg (row 174)."""
    image, truth = _third_drawer_frame(index)
    unsearched = replace(shipped_pipeline, search_when_nothing_seen=False)
    assert _trusted(unsearched(image)) == []
    reading = shipped_pipeline(image)
    trusted = [m for m in reading.measurements if m.reliable]
    match = match_to_truth(trusted, truth)
    assert len(trusted) == len(match.pairs) == len(truth) == 1
    assert trusted[0].included_angle_deg == pytest.approx(truth[0]["included_angle_deg"], abs=2.5)
