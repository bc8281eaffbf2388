"""How blobs are read: candidate readings -> choose.

Each blob is read by building its candidate readings (geometry/candidates.py) and choosing
the one of lowest rank, the first listed on ties (they are listed in order of preference):

- without hints (`read_blob`): a single wedge that is straight, starts at the tip of the
  outline and covers the whole blob is the reading; otherwise the split into merged plumes,
  the single wedge and the unexplained blob compete. With likely apexes (a model's apex
  head), the winner then competes with the single wedge and the plumes at the likely
  apexes, each ranked by its score plus a penalty per likely apex it leaves unexplained
  (`agree_with_likely`);
- along a known axis (`read_along_axis`: a hint axis, or the boom's): the split at the back
  profile's V minima against the blob read as one plume from its back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from spraycv.geometry.blobs import Blob
from spraycv.geometry.candidates import (
    BlobReading,
    SingleWedge,
    collinear,
    read_at_likely,
    single_handicap,
    single_wedge,
    split_along,
    split_reading,
    unexplained,
)
from spraycv.geometry.checks import explained_fraction, sizeable, tip_ok
from spraycv.geometry.context import ReadContext
from spraycv.geometry.plume import AxisSource, Plume, straightness
from spraycv.geometry.search import Candidate, LikelyApexes, search_wedges, wedge_from
from spraycv.geometry.tuning import TUNING


def choose(
    candidates: Sequence[BlobReading], rank: Callable[[BlobReading], float] | None = None
) -> BlobReading:
    """The candidate of lowest rank (BlobReading.rank by default); the first on ties."""
    ranks = [c.rank if rank is None else rank(c) for c in candidates]
    return candidates[int(np.argmin(ranks))]


def read_blobs(blobs: Sequence[Blob], ctx: ReadContext) -> BlobReading:
    """Every blob read without apex hints, along the hint axis where there is one; the
    plumes are fitted; score: the worst blob's."""
    if ctx.hint_axis is not None:
        readings = [read_along_axis(b, ctx.hint_axis, "hint", ctx) for b in blobs]
    else:
        readings = [read_blob(b, ctx) for b in blobs]
    return BlobReading(
        plumes=tuple(p for r in readings for p in r.plumes),
        unexplained=tuple(b for r in readings for b in r.unexplained),
        score=max((r.score for r in readings), default=math.inf),
    )


def read_blob(blob: Blob, ctx: ReadContext) -> BlobReading:
    """One blob without hints: its outline's candidate readings, the best chosen (or, where
    none reads a plume that fits, a later wedge of the search: `fallback_wedge`); then,
    with likely apexes, that reading against the readings at the likely apexes."""
    ranked = search_wedges(blob, ctx.cfg, ctx.shape, ctx.likely)
    found = ranked[0] if ranked else None
    wedge = single_wedge(blob, found, ctx.opts)
    outline = choose(outline_readings(blob, found, wedge, ctx))
    if wedge is None and not math.isfinite(outline.rank):
        wedge = fallback_wedge(blob, ranked, ctx)
        outline = outline if wedge is None else wedge.reading
    if ctx.likely is None:
        return outline
    return agree_with_likely(blob, outline, wedge, ctx.likely, ctx)


def fallback_wedge(blob: Blob, ranked: Sequence[Candidate], ctx: ReadContext) -> SingleWedge | None:
    """The first of the search's next TUNING.wedge_fallbacks wedges (ranked best first,
    the first already tried) whose apex is at the tip of the outline and whose fit opens:
    the straightest start can be a notch whose lines fit no wedge, while a real apex (a wide
    fan's blunt corner) comes next; a far corner off the tip would read the blob backwards.
    Only for a blob that nothing else reads: beside a split that fits, a later wedge would
    read merged plumes as one."""
    for found in ranked[1 : 1 + TUNING.wedge_fallbacks]:
        wedge = single_wedge(blob, found, ctx.opts) if found.tip_ok else None
        if wedge is not None:
            return wedge
    return None


def outline_readings(
    blob: Blob, found: Candidate | None, wedge: SingleWedge | None, ctx: ReadContext
) -> list[BlobReading]:
    """The candidate readings of a blob's outline, in order of preference on ties: a
    decisive single wedge alone; else the split (if any), the single wedge (if it opens),
    the unexplained blob."""
    if wedge is not None and wedge.decisive:
        return [wedge.reading]
    split = split_reading(blob, found, wedge, ctx)
    return [
        *([] if split is None else [split]),
        *([] if wedge is None else [wedge.reading]),
        unexplained(blob),
    ]


def agree_with_likely(
    blob: Blob,
    outline: BlobReading,
    wedge: SingleWedge | None,
    likely: LikelyApexes,
    ctx: ReadContext,
) -> BlobReading:
    """Of the outline's reading, the single wedge (scored by its fit alone: the likely
    apexes now weigh in instead of the search's tie-breaks), where the outline reads one
    plume the plumes read from the sure likely apexes (weight 1) it leaves unexplained
    (`singles_at_likely`, pinned there where the blob holds just one sure apex), and the
    plumes at the likely apexes (where that finds more plumes, or the outline's reading
    leaves a sure one unexplained), the reading whose score plus likely.penalty_px per likely apex
    it leaves unexplained, weighted by how sure the head is of each, is lowest; the
    outline's reading where no likely apex lies on the blob, or none ranks finite. A plume
    without a likely apex costs nothing: the head may have missed it."""
    on_outline = likely.on_outline(blob.pts)
    pts = collinear(on_outline, likely.tol_px)  # those that line up (a boom)
    if len(pts) == 0:
        return outline
    candidates = [outline]
    if wedge is not None:
        candidates.append(BlobReading.of((wedge.plume,)))
    sure = likely.sure(on_outline)  # a stray peak would read a far corner
    missed = on_outline[unexplained_by(outline, on_outline, likely) & sure]
    if len(outline.plumes) == 1:  # one plume, perhaps read from a far corner
        # several sure peaks make a boom, read at the likely apexes: one of them pinned
        # would read the whole boom as one plume
        candidates += singles_at_likely(blob, missed, likely, ctx, pin=int(sure.sum()) == 1)
    at_likely = read_at_likely(blob, likely, ctx.opts, pts)
    if at_likely is not None and (len(at_likely.plumes) > len(outline.plumes) or len(missed)):
        candidates.append(at_likely)
    return choose(candidates, lambda r: rank_with_likely(r, pts, likely))


def singles_at_likely(
    blob: Blob, pts: np.ndarray, likely: LikelyApexes, ctx: ReadContext, pin: bool
) -> list[BlobReading]:
    """The blob read as one plume from each likely apex of pts (K, 2), by a wedge search
    started there (scored by its fit alone): a wide plume's blunt apex, or one that a fixture
    merged into the blob hides inside the hull, which the hull-corner search misses. With
    `pin`, where the free fit fails or runs away from the point (two lines on a ragged wide
    edge can meet anywhere), the wedge is fitted with its apex pinned there."""
    readings = []
    for point in pts:
        found = wedge_from(blob, point, ctx.cfg, ctx.shape)
        wedge = single_wedge(blob, found, ctx.opts)
        if pin and found is not None and (wedge is None or runs_away(wedge, point, likely)):
            wedge = single_wedge(blob, replace(found, apex=point), ctx.opts, pinned=True)
        if wedge is not None:
            readings.append(BlobReading.of((wedge.plume,)))
    return readings


def runs_away(wedge: SingleWedge, point: np.ndarray, likely: LikelyApexes) -> bool:
    """The wedge's fitted apex leaves the likely apex point (2,) unexplained."""
    return bool(unexplained_by(BlobReading.of((wedge.plume,)), point[None, :], likely)[0])


def unexplained_by(reading: BlobReading, pts: np.ndarray, likely: LikelyApexes) -> np.ndarray:
    """(K,) bool: which likely apexes pts (K, 2) have no plume apex of the reading within
    max(likely.tol_px, likely.tol_frac * median plume length) (all, for no plumes)."""
    apexes = np.array([p.apex for p in reading.plumes]).reshape(-1, 2)
    if len(apexes) == 0 or len(pts) == 0:
        return np.ones(len(pts), dtype=bool)
    lengths = [p.fit.length for p in reading.plumes if p.fit is not None]
    tol = max(likely.tol_px, likely.tol_frac * float(np.median(lengths or [0.0])))
    d = np.hypot(*(apexes[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
    return d.min(axis=0) > tol


def loses_sure_apex(
    before: Sequence[Plume], after: Sequence[Plume], blob: Blob, likely: LikelyApexes | None
) -> bool:
    """The plumes `after` leave a sure likely apex on the blob's outline unexplained that the
    plumes `before` explained: a re-reading whose apex ran off a nozzle the head is sure of."""
    if likely is None:
        return False
    on_outline = likely.on_outline(blob.pts)
    sure = on_outline[likely.sure(on_outline)]
    if len(sure) == 0:
        return False
    lost = unexplained_by(BlobReading.of(tuple(after)), sure, likely)
    return bool((lost & ~unexplained_by(BlobReading.of(tuple(before)), sure, likely)).any())


def rank_with_likely(reading: BlobReading, pts: np.ndarray, likely: LikelyApexes) -> float:
    """The reading's score plus likely.penalty_px per likely apex pts (K, 2) it leaves
    unexplained (`unexplained_by`), weighted by how sure each one is; inf for a reading
    without plumes or with an infinite score."""
    if not math.isfinite(reading.score) or not reading.plumes:
        return math.inf
    missed = unexplained_by(reading, pts, likely)
    return reading.score + likely.penalty_px * float(likely.weight_of(pts)[missed].sum())


def read_along_axis(blob: Blob, u: np.ndarray, source: AxisSource, ctx: ReadContext) -> BlobReading:
    """A blob whose axis u (2,) is known: split at the back profile's V minima unless
    reading the blob as one plume is as good (bumps of droplets also make small V's)."""
    parts = tuple(p.refit(ctx.opts) for p in split_along(blob, u, True, source, ctx.cfg))
    if len(parts) == 1:
        return BlobReading.of(parts)
    split = [BlobReading.of(parts)] if sizeable(parts) else []
    return choose([*split, from_back(blob, u, source, ctx)])


def from_back(blob: Blob, u: np.ndarray, source: AxisSource, ctx: ReadContext) -> BlobReading:
    """The blob as one plume along u (2,), its apex seeded at the back of the hull; an apex
    off the tip of the outline (a virtual apex of merged plumes) costs
    TUNING.off_outline_px."""
    back = blob.hull[int(np.argmin(blob.hull @ u))]
    single = Plume(blob, back, u, True, source).refit(ctx.opts)
    score = straightness((single,))
    explained = 0.0
    if math.isfinite(score):
        if not tip_ok(single, ctx.cfg):
            score += TUNING.off_outline_px
        explained = explained_fraction(single)
    return BlobReading((single,), (), score, single_handicap(explained))
