"""Candidate readings of one blob, each built by one small function (geometry/reading.py
chooses among them).

A `BlobReading` is what a blob (or a frame's blobs) reads as: its plumes, the blobs no wedge
explains, and a score. The candidates:
- `single_wedge`: the blob as one plume, the search's best wedge, fitted;
- `split_reading`: the blob as plumes merged on a boom, split at the V minima of its back
  profile seen across its deepest notch (or along the search's axis);
- `split_along`: the same along a known axis (a hint's, the boom's);
- `read_at_likely`: one plume per likely apex (a model's apex head) lined up on the outline;
- `unexplained`: no plume, the blob left as it is.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob, notches, split_merged
from spraycv.geometry.boomline import along_boom, apexes_coincide, boom_normal
from spraycv.geometry.checks import (
    boom_notch,
    explained_fraction,
    opens,
    parallel,
    sizeable,
)
from spraycv.geometry.context import ReadContext
from spraycv.geometry.plume import AxisSource, Plume, plumes_at_apexes, straightness
from spraycv.geometry.search import Candidate, LikelyApexes
from spraycv.geometry.tuning import TUNING
from spraycv.geometry.wedge import FitOptions, normal_left


@dataclass(frozen=True)
class BlobReading:
    """What a blob, or a frame's blobs, reads as.

    plumes: the plumes found, fitted; unexplained: the blobs no wedge explains; score (px,
    lower is better, inf for no plume or one that does not fit): the worst plume's
    straightness, or how the reading was scored against its rivals. handicap_px: added to
    the score when readings compete (`rank`): a single wedge must beat a split by a margin.
    """

    plumes: tuple[Plume, ...] = ()
    unexplained: tuple[Blob, ...] = ()
    score: float = math.inf
    handicap_px: float = 0.0

    @property
    def rank(self) -> float:
        return self.score + self.handicap_px

    @staticmethod
    def of(plumes: tuple[Plume, ...], unexplained: tuple[Blob, ...] = ()) -> BlobReading:
        """A reading scored by its plumes' straightness."""
        return BlobReading(plumes, unexplained, straightness(plumes))


def unexplained(blob: Blob) -> BlobReading:
    """The blob left unread (no wedge fits it): the last resort."""
    return BlobReading((), (blob,))


def single_handicap(explained: float) -> float:
    """How much straighter than a split a single wedge must be to win (px): little where it
    explains the whole outline, more where it leaves much of the blob outside (a boom whose
    first plume alone looked like a clean wedge)."""
    if explained < TUNING.min_explained:
        return TUNING.lonely_margin_px
    return TUNING.as_straight_px


@dataclass(frozen=True)
class SingleWedge:
    """The search's best wedge, fitted, where it opens forward: the blob read as one plume.

    score: the worse of the fit's straightness and the search's score (the search's plain
    least-squares fit sees the bow and lopsided sides that the robust fit trims away), plus
    TUNING.off_outline_px when the apex is not at the tip of the outline (merged plumes'
    virtual apex); explained: the fraction of the outline inside the wedge.
    """

    plume: Plume
    found: Candidate
    score: float
    explained: float

    @property
    def clean(self) -> bool:
        return self.score <= TUNING.clean_single_px

    @property
    def decisive(self) -> bool:
        """A straight wedge from the tip of the outline that covers the whole blob: one
        plume (merged neighbours would leave much of the outline outside it)."""
        return self.found.tip_ok and self.clean and self.explained >= TUNING.min_explained

    @property
    def reading(self) -> BlobReading:
        return BlobReading((self.plume,), (), self.score, single_handicap(self.explained))


def single_wedge(
    blob: Blob, found: Candidate | None, opts: FitOptions, pinned: bool = False
) -> SingleWedge | None:
    """The blob as one plume from the search's best wedge (its apex held there if pinned);
    None when there is none, or its fit fails or does not open forward."""
    if found is None:
        return None
    plume = Plume(blob, found.apex, found.axis, False, "bisector", pinned=pinned).refit(opts)
    if not opens(plume):
        return None
    score = max(straightness((plume,)), found.score)
    if not found.tip_ok:
        score += TUNING.off_outline_px
    return SingleWedge(plume, found, score, explained_fraction(plume))


def merge_depth(blob: Blob, u: np.ndarray | None, cfg: GeometryConfig) -> float:
    """Smallest notch depth (px) that separates two plumes, seen across axis u (2,) (or
    the blob's extent, without one)."""
    if u is None:
        extent = float(np.ptp(blob.hull, axis=0).max())
    else:
        t = blob.hull @ normal_left(u)
        extent = float(t.max() - t.min())
    return max(cfg.merge_min_depth_px, cfg.merge_min_depth_frac * extent)


def split_along(
    blob: Blob, u: np.ndarray, fixed: bool, source: AxisSource, cfg: GeometryConfig
) -> list[Plume]:
    """One plume per V minimum of the blob's back profile along u (2,), not fitted; merged
    plumes split at the crotches between them (a single plume where there is one minimum)."""
    apexes, crotches = split_merged(blob, u, merge_depth(blob, u, cfg))
    return plumes_at_apexes(blob, apexes, u, fixed, source, crotches)


def _split_at_notch(
    blob: Blob, found: Candidate | None, wedge: SingleWedge | None, cfg: GeometryConfig
) -> list[Plume]:
    """Plumes split across the blob's deepest notch (its hull edge's normal is the sprays'
    direction); beside a clean wedge from the tip, the notch that can be its crotch with a
    neighbour goes first. [] without a notch."""
    found_notches = notches(blob, merge_depth(blob, None if found is None else found.axis, cfg))
    if not found_notches:
        return []
    if wedge is not None and wedge.found.tip_ok and wedge.clean:
        next_door = [n for n in found_notches if boom_notch(n, wedge.plume)]
        found_notches = next_door or found_notches
    return split_along(blob, found_notches[0].normal, False, "bisector", cfg)


def split_reading(
    blob: Blob, found: Candidate | None, wedge: SingleWedge | None, ctx: ReadContext
) -> BlobReading | None:
    """The blob as two or more plumes merged on a boom, each on its own bisector until the
    boom axis is known, split across a notch or, where the search's apex is off the tip,
    along its axis; None where neither gives two. Scored inf unless the parts point the
    same way and are all real plumes."""
    parts = _split_at_notch(blob, found, wedge, ctx.cfg)
    if len(parts) < 2 and found is not None and not found.tip_ok:
        parts = split_along(blob, found.axis, False, "bisector", ctx.cfg)
    if len(parts) < 2:
        return None
    fitted = tuple(p.refit(ctx.opts) for p in parts)
    real = parallel(fitted, ctx.cfg) and sizeable(fitted)
    return BlobReading(fitted, (), straightness(fitted) if real else math.inf)


def collinear(points: np.ndarray, tol_px: float) -> np.ndarray:
    """The largest subset (K', 2) of points (K, 2) within tol_px of one line through two of
    them: nozzles on a boom line up, a stray peak (a nozzle that is off, a fixture) does not."""
    if len(points) <= 2:
        return points
    best = np.ones(len(points), dtype=bool)
    best_n = 0
    for i, j in itertools.combinations(range(len(points)), 2):
        d = points[j] - points[i]
        norm = float(np.hypot(*d))
        if norm < 1e-9:
            continue
        off = np.abs((points - points[i]) @ np.array([-d[1], d[0]]) / norm)
        near = off <= tol_px
        if int(near.sum()) > best_n:
            best, best_n = near, int(near.sum())
    return points[best]


def likely_on_outline(blob: Blob, likely: LikelyApexes) -> np.ndarray:
    """The likely apexes (K, 2) on the blob's outline that line up (a boom)."""
    return collinear(likely.on_outline(blob.pts), likely.tol_px)


def read_at_likely(
    blob: Blob, likely: LikelyApexes, opts: FitOptions, pts: np.ndarray | None = None
) -> BlobReading | None:
    """One plume per likely apex on the blob's outline that lines up with the others (a
    boom), along the boom's normal, split at the crotches between them; the parts that fit
    and stay at a likely apex (`stays_at`), even one alone: a plume whose side a merged
    neighbour hides is left for the refiner to recover from its peak (None for fewer than
    two such apexes, or no part that stays, or parts that are not plumes). `pts`: those
    apexes (K, 2), if already found."""
    if pts is None:
        pts = likely_on_outline(blob, likely)
    if apexes_coincide(pts):
        return None
    u = boom_normal(pts, [blob.centroid])
    seeds = plumes_at_apexes(blob, pts[along_boom(pts, u)], u, True, "boom")
    fitted = tuple(f for f in (s.refit(opts) for s in seeds) if stays_at(f, likely))
    if not fitted or not sizeable(fitted):
        return None
    return BlobReading.of(fitted)


def stays_at(part: Plume, likely: LikelyApexes) -> bool:
    """The part was fitted and its apex stayed at a likely apex (within max(likely.tol_px,
    TUNING.likely_drift_frac x its length)): where a merged neighbour hides a side, a
    part's lines can meet far away, and that is no reading at the likely apex."""
    if not part.fitted or part.fit is None:
        return False
    tol = max(likely.tol_px, TUNING.likely_drift_frac * part.fit.length)
    return float(np.hypot(*(likely.points - part.fit.apex).T).min()) <= tol
