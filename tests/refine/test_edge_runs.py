"""The refiner's edge runs and trimmed line against their plain definitions: the faster forms
of spraycv.refine.edges (docs/experiments.md, row 183) must read exactly the same."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from spraycv.refine.edges import TRIM_PX, _CropRuns, _Runs, _trim_distance, crop_edges
from spraycv.refine.pose import crop_pose, pose_transform

SIZE = (128, 128)


def runs_by_definition(above: np.ndarray) -> tuple[np.ndarray, ...]:
    """_Runs' four tables written out with np.where, column by column."""
    w = above.shape[1]
    cols = np.broadcast_to(np.arange(w), above.shape)
    rev = (slice(None), slice(None, None, -1))
    return (
        np.maximum.accumulate(np.where(above, cols, -1), axis=1),
        np.minimum.accumulate(np.where(above, cols, w)[rev], axis=1)[rev],
        np.maximum.accumulate(np.where(above, -1, cols), axis=1) + 1,
        np.minimum.accumulate(np.where(above, w, cols)[rev], axis=1)[rev] - 1,
    )


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (5, 17), (40, 128)])
@pytest.mark.parametrize("share", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_runs_match_their_definition(shape, share):
    above = np.random.default_rng(7).random(shape) < share
    runs = _Runs.of(above)
    tables = (runs.left_above, runs.right_above, runs.run_start, runs.run_end)
    for got, expected in zip(tables, runs_by_definition(above), strict=True):
        np.testing.assert_array_equal(got, expected)


# distances of points from a line: all within TRIM_PX, a few beyond, most beyond, one point,
# and the 80th percentile falling exactly between a point within and one beyond
TRIM_CASES = [
    [0.2],
    [4.0],
    [0.1] * 10,
    [0.1] * 8 + [5.0, 6.0],
    [0.1] * 7 + [5.0, 6.0, 7.0],
    [3.0, 4.0, 5.0, 0.5],
    [TRIM_PX] * 4 + [TRIM_PX + 1e-9],
    [0.0, 0.0, 0.0, 0.0, 9.0, 9.0],
]


@pytest.mark.parametrize("distances", TRIM_CASES)
def test_trim_distance_is_the_floored_80th_percentile(distances):
    off = np.asarray(distances, float)
    assert _trim_distance(off) == max(TRIM_PX, float(np.percentile(off, 80)))


def test_trim_distance_on_random_distances():
    rng = np.random.default_rng(11)
    for n in range(1, 60):
        off = np.abs(rng.normal(0.0, rng.uniform(0.3, 3.0), n))
        assert _trim_distance(off) == max(TRIM_PX, float(np.percentile(off, 80)))


def crop_probability(seed: int) -> np.ndarray:
    """(128, 128) float32: a smooth random field around 0.5, runs of every length."""
    noise = np.random.default_rng(seed).random((16, 16)).astype(np.float32)
    return cv2.resize(noise, SIZE[::-1], interpolation=cv2.INTER_CUBIC)


# (band read, the other band the runs are shared with): overlapping, nested, disjoint, and
# one that lies below the crop (the crop spans -0.1 to 0.5 of the length)
BANDS = [
    ((0.1, 0.4), (0.0, 0.25)),
    ((0.0, 0.25), (0.1, 0.4)),
    ((0.15, 0.2), (0.05, 0.45)),
    ((0.3, 0.45), (0.0, 0.1)),
    ((0.6, 0.9), (0.1, 0.4)),
]


@pytest.mark.parametrize(("band", "other"), BANDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shared_runs_read_the_edges_each_band_reads_alone(band, other, seed):
    prob = crop_probability(seed)
    transform = pose_transform(crop_pose((300.0, 40.0), (0.0, 1.0), 200.0, 25.0), SIZE)
    shared = _CropRuns.over(prob, (band, other))
    alone = crop_edges(prob, transform, band)
    together = crop_edges(prob, transform, band, shared)
    np.testing.assert_array_equal(together.left, alone.left)
    np.testing.assert_array_equal(together.right, alone.right)
