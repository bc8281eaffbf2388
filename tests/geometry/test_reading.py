"""The reading layer's small parts: choose, the one plume constructor, coincidence, tuning."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry import MeasureHints
from spraycv.geometry.analytic import WedgeSpec, draw_plumes
from spraycv.geometry.blobs import clean_mask, find_blobs
from spraycv.geometry.boomline import along_boom, apexes_coincide
from spraycv.geometry.candidates import BlobReading
from spraycv.geometry.context import ReadContext
from spraycv.geometry.plume import plumes_at_apexes, straightness
from spraycv.geometry.reading import choose, read_blobs
from spraycv.geometry.tuning import TUNING


def _reading(score: float, handicap: float = 0.0) -> BlobReading:
    return BlobReading((), (), score, handicap)


def test_choose_takes_the_lowest_rank_and_the_first_on_ties() -> None:
    a, b, c = _reading(1.0), _reading(0.5, 0.5), _reading(math.inf)
    assert choose([a, b, c]) is a  # 1.0 == 0.5 + 0.5: the first listed wins
    assert choose([c, b]) is b
    assert choose([c, _reading(math.inf)]) is c  # nothing finite: still the first
    assert choose([a, b], rank=lambda r: -r.score) is a


def test_apexes_coincide_below_the_one_threshold() -> None:
    tol = TUNING.coincide_px
    assert apexes_coincide(np.zeros((0, 2)))
    assert apexes_coincide(np.array([[5.0, 5.0]]))
    assert apexes_coincide(np.array([[5.0, 5.0], [5.0 + 0.9 * tol, 5.0 - 0.9 * tol]]))
    assert not apexes_coincide(np.array([[5.0, 5.0], [5.0 + tol, 5.0]]))


def _merged_boom() -> tuple[np.ndarray, list[tuple[float, float]]]:
    apexes = [(120.0, 40.0), (260.0, 40.0), (400.0, 40.0)]
    specs = [WedgeSpec(a, 0.0, 35.0, 35.0, 240.0) for a in apexes]
    return draw_plumes((320, 520), specs), apexes


def test_one_constructor_for_one_apex_and_for_merged_plumes() -> None:
    mask, apexes = _merged_boom()
    (blob,) = find_blobs(clean_mask(mask, 0, 3), 150, 0.02)
    down = np.array([0.0, 1.0])
    pts = np.array(apexes)[::-1]  # the constructor wants them along -n_left: left to right
    ordered = pts[along_boom(pts, down)]
    np.testing.assert_array_equal(ordered, np.array(apexes))
    (alone,) = plumes_at_apexes(blob, ordered[:1], down, False, "bisector", indices=[7])
    assert not alone.merged and alone.crotch_left is None and alone.index == 7
    parts = plumes_at_apexes(blob, ordered, down, True, "boom")
    assert [p.merged for p in parts] == [True] * 3
    assert parts[0].crotch_left is None and parts[-1].crotch_right is None
    # neighbours share their crotch, which lies between their apexes
    assert parts[0].crotch_right is parts[1].crotch_left
    assert apexes[0][0] < parts[0].crotch_right[0] < apexes[1][0]


def test_read_blobs_returns_a_typed_reading_of_fitted_plumes() -> None:
    mask, apexes = _merged_boom()
    ctx = ReadContext.of(GeometryConfig(), MeasureHints(), mask.shape)
    (blob,) = find_blobs(clean_mask(mask, 0, 3), 150, 0.02)
    reading = read_blobs([blob], ctx)
    assert len(reading.plumes) == 3 and reading.unexplained == ()
    assert all(p.fitted for p in reading.plumes)
    assert straightness(reading.plumes) < 1.0
    for p, (x, y) in zip(sorted(reading.plumes, key=lambda p: p.apex[0]), apexes, strict=True):
        assert math.hypot(p.apex[0] - x, p.apex[1] - y) < 3.0


def test_tuning_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TUNING.coincide_px = 1.0  # type: ignore[misc]
