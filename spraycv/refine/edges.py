"""From a canonical crop's spray probability to the plume's two boundary lines in the image.

Each crop row between 10 and 40 % of the length (the band of the angle's definition) gives
the sub-pixel positions where the probability crosses 0.5 at both ends of the run that holds
the axis; the points map back to the image, and one line is fitted per side.

Where the two sides meet is settled next to the orifice, not by the band: the lines of the
band, fitted freely, meet at an apex extrapolated over a tenth of the length and more, and a
pixel off there turns both lines (docs/experiments.md, row 64). So the apex is where the
sides of the near-orifice band (0-25 % of the length) meet, and the band's lines are fitted
through it; without that apex (too few edges near the orifice, or sides that meet far from
where the crop puts the nozzle) each side is fitted freely.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from spraycv.geometry.linefit import LineFit, fit_line, intersect
from spraycv.refine.pose import crop_row, spray_length, to_image

MIN_EDGE_ROWS = 6  # fewer usable rows on a side: the crop gives no line for it

READ_BAND = (0.1, 0.4)  # the share of the spray length the edges are read on: the
# cone angle's definition (docs/cone_angle.md); the refiner's sidecar "band"
APEX_BAND = (0.0, 0.25)  # the share of the length the apex is located on (experiments row 66:
# val_std MAE 1.60 -> 1.24 deg; 2-20 %, 3-25 %, 5-30 % and others measured too)
APEX_REACH_FRAC = 0.1  # a near-orifice apex further than this share of the length from the
# crop's own apex is not this plume's (sides nearly parallel there, or another edge)
TRIM_PX = 1.5  # edge points further off a line through the apex are dropped in its last fit


@dataclass(frozen=True)
class CropEdges:
    """Edge points of the plume in image pixels: left and right, (N, 2) each."""

    left: np.ndarray
    right: np.ndarray


def _crossings(profile: np.ndarray, inside: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """Fractional columns (R,) between neighbours where each row's profile crosses 0.5.

    profile: (R, W) float; inside, outside: (R,) int columns, one of them each side of 0.5.
    """
    rows = np.arange(profile.shape[0])
    a = profile[rows, inside].astype(np.float64)
    b = profile[rows, outside].astype(np.float64)
    return inside + (outside - inside) * (a - 0.5) / np.maximum(a - b, 1e-6)


@dataclass(frozen=True)
class _Runs:
    """Where the runs above 0.5 of each row of a band lie, for lookups in O(1) per row; each
    (R, W) int: the nearest column above 0.5 at or left of each column (-1: none) and at or
    right of it (W: none), and the first and last column of the run holding each column."""

    left_above: np.ndarray
    right_above: np.ndarray
    run_start: np.ndarray
    run_end: np.ndarray

    @classmethod
    def of(cls, above: np.ndarray) -> _Runs:
        w = above.shape[1]
        small = np.int16 if w < 2**15 else np.int64  # small integers scan faster
        after = np.arange(1, w + 1, dtype=small)  # column + 1
        left = np.arange(w, 0, -1, dtype=small)  # w - column
        below = ~above
        rev = (slice(None), slice(None, None, -1))
        # products with the masks select as np.where(above, col, -1) etc. would, at a
        # fraction of the cost: after * above - 1 is the column where above, else -1
        return cls(
            np.maximum.accumulate(after * above - 1, axis=1),
            np.minimum.accumulate((w - left * above)[rev], axis=1)[rev],
            np.maximum.accumulate(after * below - 1, axis=1) + 1,
            np.minimum.accumulate((w - left * below)[rev], axis=1)[rev] - 1,
        )

    def nearest(self, centres: np.ndarray) -> np.ndarray:
        """Per row (R,), the column above 0.5 nearest to its centre column (the left one on
        a tie; -1 where the row has none)."""
        rows, w = np.arange(len(centres)), self.left_above.shape[1]
        lo, hi = self.left_above[rows, centres], self.right_above[rows, centres]
        take_lo = (lo >= 0) & ((hi >= w) | (centres - lo <= hi - centres))
        return np.where(take_lo, lo, np.where(hi < w, hi, -1))


@dataclass(frozen=True)
class _CropRuns:
    """The _Runs of one crop's rows from `first` on, computed once for all the bands read
    on the crop (side_lines reads two that overlap: each row's runs are its own)."""

    first: int
    runs: _Runs

    @classmethod
    def over(
        cls, prob: np.ndarray, bands: Sequence[tuple[float, float] | None]
    ) -> _CropRuns | None:
        """The runs of the (H, W) probability's rows from the first to the last that the
        bands (None: none) span; None where none spans a row."""
        spans = [_band_rows(band, prob.shape) for band in bands if band is not None]
        spans = [(first, last) for first, last in spans if first <= last]
        if not spans:
            return None
        first, last = min(f for f, _ in spans), max(t for _, t in spans)
        return cls(first, _Runs.of(prob[first : last + 1] > 0.5))

    def rows(self, first: int, last: int) -> _Runs | None:
        """The runs of crop rows first..last, None where they are not all held."""
        start, stop = first - self.first, last + 1 - self.first
        if first > last or start < 0 or stop > self.runs.left_above.shape[0]:
            return None
        return _Runs(*(table[start:stop] for table in vars(self.runs).values()))


def _band_rows(band: tuple[float, float], shape: tuple[int, int]) -> tuple[int, int]:
    """(first, last) crop rows of a band of the spray length (last < first: none)."""
    first = max(int(np.ceil(crop_row(band[0], shape))), 0)
    last = min(int(np.floor(crop_row(band[1], shape))), shape[0] - 1)
    return first, last


def _row_edges(
    profile: np.ndarray, runs: _Runs, centres: np.ndarray, reach: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per row (R,), the (left, right) sub-pixel edge columns of the run above 0.5 nearest to
    the row's centre column, NaN where the run meets the crop border (the edge lies outside
    the crop) or no run lies within `reach` of the centre.

    profile: (R, W) float probability; centres: (R,) int columns."""
    w = profile.shape[1]
    seed = runs.nearest(centres)
    found = (seed >= 0) & (np.abs(seed - centres) <= reach)
    rows, at = np.arange(len(centres)), np.maximum(seed, 0)
    lo, hi = runs.run_start[rows, at], runs.run_end[rows, at]
    left = np.where(found & (lo > 0), _crossings(profile, lo, np.maximum(lo - 1, 0)), np.nan)
    right = np.where(found & (hi < w - 1), _crossings(profile, hi, np.minimum(hi + 1, w - 1)),
                     np.nan)  # fmt: skip
    return left, right


def _tracked_centres(left: np.ndarray, right: np.ndarray, start: float) -> np.ndarray:
    """Each row's centre column (R,): the rounded midpoint of the last row above it with both
    edges, `start` rounded for rows with none above."""
    both = np.isfinite(left) & np.isfinite(right)
    last = np.maximum.accumulate(np.where(both, np.arange(len(left)), -1))
    above = np.concatenate([[-1], last[:-1]])
    middle = np.rint((left + right)[np.maximum(above, 0)] / 2)
    return np.where(above >= 0, middle, round(start)).astype(np.int64)


def crop_edges(
    prob: np.ndarray,
    transform: np.ndarray,
    band: tuple[float, float] = READ_BAND,
    shared: _CropRuns | None = None,
) -> CropEdges:
    """Edge points of the plume issuing from the crop's apex.

    Args:
        prob: (H, W) float spray probability of the canonical crop.
        transform: (2, 3) crop -> image affine (spraycv.refine.pose.pose_transform).
        band: the part of the spray length to read, as fractions.
        shared: the runs of this crop's rows, where computed already (_CropRuns.over).
    """
    w = prob.shape[1]
    first, last = _band_rows(band, prob.shape)
    profile = prob[first : last + 1]
    if not len(profile):  # a band narrower than a row, or outside the crop
        return CropEdges(np.zeros((0, 2)), np.zeros((0, 2)))
    runs = None if shared is None else shared.rows(first, last)
    runs = _Runs.of(profile > 0.5) if runs is None else runs
    # the run is tracked from the apex down: each row seeds at the previous row's midpoint,
    # so that a neighbouring plume entering the crop's side is never taken for this one.
    # Rows are read all at once from guessed seeds, and again from the seeds those readings
    # give, until they agree: row k is settled after k rounds, most bands after two
    start, reach = (w - 1) / 2, w // 4
    centres = np.full(len(profile), round(start), dtype=np.int64)
    for _ in range(len(profile) + 1):
        left, right = _row_edges(profile, runs, centres, reach)
        settled = _tracked_centres(left, right, start)
        if np.array_equal(settled, centres):
            break
        centres = settled
    rows = np.arange(first, first + len(profile), dtype=np.float64)
    return CropEdges(_mapped(left, rows, transform), _mapped(right, rows, transform))


def _mapped(cols: np.ndarray, rows: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """The crop points (cols, rows) where cols is finite, in image pixels (N, 2)."""
    keep = np.isfinite(cols)
    if not keep.any():
        return np.zeros((0, 2))
    return to_image(np.column_stack([cols[keep], rows[keep]]), transform)


def _mean_apex(edges: np.ndarray | None, channel: np.ndarray | None) -> np.ndarray | None:
    if edges is None or channel is None:
        return channel if edges is None else edges
    return (edges + channel) / 2.0


# How the apex that both sides are pinned to is settled, from the apex where the near-orifice
# edges meet and the apex channel's reading (spraycv.refine.apex; None where the refiner has
# no apex channel or it is unsure); each falls back on the other where it has none
APEX_SOURCES: dict[str, Callable[[np.ndarray | None, np.ndarray | None], np.ndarray | None]] = {
    "edges": lambda edges, channel: edges,
    "channel": lambda edges, channel: edges if channel is None else channel,
    "mean": _mean_apex,
}


def side_lines(
    prob: np.ndarray,
    transform: np.ndarray,
    band: tuple[float, float] = READ_BAND,
    apex_band: tuple[float, float] | None = APEX_BAND,
    channel_apex: np.ndarray | None = None,
    apex_from: str = "edges",
) -> tuple[LineFit | None, LineFit | None]:
    """The plume's (left, right) boundary lines in the image, read on `band` of one crop and
    through the apex located on `apex_band` (None: each side fitted freely), or settled with
    the apex channel's reading `channel_apex` (2,) as `apex_from` names (APEX_SOURCES).

    Args:
        prob: (H, W) float spray probability of the canonical crop.
        transform: (2, 3) crop -> image affine of the crop's pose.
    """
    shared = _CropRuns.over(prob, (band, apex_band))
    edges = crop_edges(prob, transform, band, shared)
    apex = crop_apex(prob.shape, transform)
    near = None if apex_band is None else near_apex(prob, transform, apex_band, shared)
    if apex_band is not None:
        near = APEX_SOURCES[apex_from](near, channel_apex)
    reach = APEX_REACH_FRAC * spray_length(transform, prob.shape)
    if near is not None and np.hypot(*(near - apex)) > reach:
        near = None
    if near is None:
        return side_line(edges.left, apex), side_line(edges.right, apex)
    return pinned_line(edges.left, near), pinned_line(edges.right, near)


def crop_apex(shape: tuple[int, int], transform: np.ndarray) -> np.ndarray:
    """(2,) the image point where a crop of this shape and transform puts the apex."""
    return to_image(np.array([[(shape[1] - 1) / 2, crop_row(0.0, shape)]]), transform)[0]


def near_apex(
    prob: np.ndarray,
    transform: np.ndarray,
    apex_band: tuple[float, float] = APEX_BAND,
    shared: _CropRuns | None = None,
) -> np.ndarray | None:
    """(2,) image point where the free lines of the crop's two sides on `apex_band` meet;
    None when a side has too few edge points there or the lines are parallel (`shared`:
    as crop_edges)."""
    edges = crop_edges(prob, transform, apex_band, shared)
    reference = crop_apex(prob.shape, transform)
    left, right = side_line(edges.left, reference), side_line(edges.right, reference)
    if left is None or right is None:
        return None
    return intersect(left.point, left.direction, right.point, right.direction)


def pinned_line(points: np.ndarray, apex: np.ndarray) -> LineFit | None:
    """The line through `apex` (2,) that fits `points` (N, 2) best (total least squares, then
    again without the points further off than the larger of TRIM_PX and their 80th
    percentile), directed away from the apex; None with too few points. Its RMS is over the
    points of that last fit, as side_line's is over its inliers: the worst fifth (droplets,
    a neighbour's edge) is left out, an edge that disagrees with the apex is not."""
    if len(points) < MIN_EDGE_ROWS:
        return None
    rel = points - apex
    keep = np.ones(len(rel), dtype=bool)
    for _ in range(2):
        kept = rel[keep]
        _, vectors = np.linalg.eigh(kept.T @ kept)
        u = vectors[:, 1]
        off = np.abs(rel @ np.array([-u[1], u[0]]))
        keep = off <= _trim_distance(off)
    if float(rel.mean(axis=0) @ u) < 0:
        u = -u
    rms = float(np.sqrt(np.mean(off[keep] ** 2)))  # over the points it was fitted to
    return LineFit(np.asarray(apex, dtype=np.float64).copy(), u, rms, len(points),
                   int((off <= TRIM_PX).sum()))  # fmt: skip


def _trim_distance(off: np.ndarray) -> float:
    """max(TRIM_PX, the 80th percentile of the distances off (N >= 1,)).

    np.percentile interpolates between the sorted values at floor(0.8 (N - 1)) and the one
    after, and never exceeds the larger of them: where both are within TRIM_PX (as many
    points within it as reach past them), the percentile cannot exceed it and is not
    computed (np.percentile costs tens of microseconds, this count one or two).
    """
    n = off.size
    if np.count_nonzero(off <= TRIM_PX) >= min(n, int(0.8 * (n - 1)) + 2):
        return TRIM_PX
    return max(TRIM_PX, float(np.percentile(off, 80)))


def side_line(points: np.ndarray, apex: np.ndarray) -> LineFit | None:
    """A robust line through one side's points, directed away from `apex`; None when the
    side has too few points."""
    if len(points) < MIN_EDGE_ROWS:
        return None
    fit = fit_line(points, method="huber", outlier_px=1.5)
    direction = fit.direction
    if np.dot(points.mean(axis=0) - apex, direction) < 0:
        direction = -direction
    return LineFit(fit.point, direction, fit.rms, fit.n_points, fit.n_inliers)
