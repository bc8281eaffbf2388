"""How a blob is read: one plume, or several merged on a boom (split at V minima).

Each blob is read as one plume (the hull-corner search) and, where its outline has a deep
notch, as several plumes split at the V minima of its back profile seen across the notch;
the reading whose boundaries are straighter (and which explains the whole outline) wins.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob, Notch, crotches_between, notches, split_merged
from spraycv.geometry.report import Plume
from spraycv.geometry.search import LikelyApexes, search_wedge, tip_allowance
from spraycv.geometry.tuning import TUNING
from spraycv.geometry.wedge import FitOptions, normal_left


def blob_extent(blob: Blob) -> float:
    return float(np.ptp(blob.hull, axis=0).max())


def merge_depth(blob: Blob, u: np.ndarray | None, cfg: GeometryConfig) -> float:
    """Smallest notch depth that separates two plumes (px)."""
    if u is None:
        extent = blob_extent(blob)
    else:
        t = blob.hull @ normal_left(u)
        extent = float(t.max() - t.min())
    return max(cfg.merge_min_depth_px, cfg.merge_min_depth_frac * extent)


def split_blob(
    blob: Blob, u: np.ndarray, fixed: bool, source: str, cfg: GeometryConfig
) -> list[Plume]:
    """One plume per V minimum of the blob's back profile along u (merged plumes split)."""
    apexes, crotches = split_merged(blob, u, merge_depth(blob, u, cfg))
    if len(apexes) == 1:
        return [Plume(blob, apexes[0], u, fixed, source)]
    out = []
    for j, a in enumerate(apexes):
        # apexes run along -n_left: the previous crotch is on this plume's left
        out.append(
            Plume(
                blob,
                a,
                u,
                fixed,  # free plumes: own bisector until the boom axis is known
                source,
                crotch_left=crotches[j - 1] if j > 0 else None,
                crotch_right=crotches[j] if j < len(crotches) else None,
                merged=True,
            )
        )
    return out


def read_blobs(
    blobs: list[Blob],
    hint_axis: np.ndarray | None,
    cfg: GeometryConfig,
    opts: FitOptions,
    shape: tuple[int, int],
    likely: LikelyApexes | None = None,
) -> list:
    """Plumes without apex hints: search (or the hint axis), then split merged ones.

    Each blob is read as one plume (the hull-corner search) and, where its outline has a
    deep notch, as several plumes split at the V minima of the back profile seen across the
    notch; the reading whose boundaries are straighter wins. With likely apexes (a model's
    apex head), a blob with two or more of them on its outline is also read as one plume
    per likely apex, and that reading wins when it is about as straight and finds more
    plumes: merged neighbours whose notches are too shallow to split at. Returned plumes
    are fitted.
    """
    plumes: list[Plume | Blob] = []
    for blob in blobs:
        if hint_axis is not None:
            plumes.extend(read_along_axis(blob, hint_axis, "hint", cfg, opts))
            continue
        found, score, single = read_blob(blob, cfg, opts, shape, likely)
        if likely is not None:
            found = agree_with_likely(blob, likely, opts, (found, score), single)
        plumes.extend(found)
    return plumes


def agree_with_likely(
    blob: Blob,
    likely: LikelyApexes,
    opts: FitOptions,
    found: tuple[list[Plume | Blob], float],
    single: Plume | None,
) -> list[Plume | Blob]:
    """Of the outline's reading, the single wedge and the plumes at the likely apexes (two
    or more, and only where that finds more plumes), the reading whose score plus
    likely.penalty_px per likely apex it leaves unexplained (no plume apex near it) is
    lowest; the outline's reading where no likely apex lies on the blob. A plume without a
    likely apex costs nothing: the head may have missed it."""
    pts = collinear(likely.on_outline(blob.pts), likely.tol_px)
    if len(pts) == 0:
        return found[0]
    readings = [found]
    if single is not None and single.fit is not None and single.fit.ok:
        readings.append(([single], worst_score([single])))
    at_likely = read_at_likely(blob, likely, opts, pts)
    if at_likely is not None and len(at_likely) > sum(isinstance(p, Plume) for p in found[0]):
        readings.append((list(at_likely), worst_score(at_likely)))

    def rank(reading: tuple[list[Plume | Blob], float]) -> float:
        apexes = np.array([p.apex for p in reading[0] if isinstance(p, Plume)]).reshape(-1, 2)
        if not math.isfinite(reading[1]) or len(apexes) == 0:
            return math.inf
        lengths = [p.fit.length for p in reading[0] if isinstance(p, Plume) and p.fit]
        tol = max(likely.tol_px, likely.tol_frac * float(np.median(lengths or [0.0])))
        d = np.hypot(*(apexes[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
        return reading[1] + likely.penalty_px * int((d.min(axis=0) > tol).sum())

    ranks = [rank(r) for r in readings]
    best = int(np.argmin(ranks))
    return readings[best][0] if math.isfinite(ranks[best]) else found[0]


def read_blob(
    blob: Blob,
    cfg: GeometryConfig,
    opts: FitOptions,
    shape: tuple[int, int],
    likely: LikelyApexes | None,
) -> tuple[list[Plume | Blob], float, Plume | None]:
    """One blob read from its outline alone: (plumes, or the blob if none fits; the
    reading's score, px, inf for none; the best single wedge, None if none opens)."""
    cand = search_wedge(blob, cfg, shape, likely)
    single = None
    if cand is not None:
        single = Plume(blob, cand.apex, cand.axis, False, "bisector")
        single.refit(opts)
    single_score = math.inf
    explained = 0.0
    if single is not None and cand is not None and opens(single):
        single_score = max(worst_score([single]), cand.score)
        explained = explained_fraction(single)
        if not cand.tip_ok:
            single_score += TUNING.off_outline_px  # apex off the outline: maybe a virtual one
    clean_fit = single_score <= TUNING.clean_single_px
    whole = explained >= TUNING.min_explained
    if single is not None and cand is not None and cand.tip_ok and clean_fit and whole:
        # a straight wedge from the tip of the outline that covers the whole blob: one
        # plume (merged neighbours would leave much of the outline outside it)
        return [single], single_score, single
    merged: list[Plume] = []
    found = notches(blob, merge_depth(blob, cand.axis if cand else None, cfg))
    if found and single is not None and cand is not None and cand.tip_ok and clean_fit:
        # a clean wedge not covering the blob: boom plume 1, its neighbours' notch first
        found = [n for n in found if boom_notch(n, single)] or found
    if found:
        merged = split_blob(blob, found[0].normal, False, "bisector", cfg)
    if len(merged) < 2 and cand is not None and not cand.tip_ok:
        merged = split_blob(blob, cand.axis, False, "bisector", cfg)
    if len(merged) >= 2:
        for p in merged:
            p.refit(opts)
        score = worst_score(merged) if parallel(merged, cfg) and sizeable(merged) else math.inf
        # split when that explains the outline better, or when one wedge leaves much of
        # the blob outside (a boom whose first plume alone looked like a clean wedge)
        lonely = explained < TUNING.min_explained
        if score <= single_score + (TUNING.lonely_margin_px if lonely else TUNING.as_straight_px):
            return list(merged), score, single if math.isfinite(single_score) else None
    if single is not None and math.isfinite(single_score):
        return [single], single_score, single
    return [blob], math.inf, None


def read_at_likely(
    blob: Blob, likely: LikelyApexes, opts: FitOptions, pts: np.ndarray | None = None
) -> list[Plume] | None:
    """One plume per likely apex on the blob's outline that lines up with the others (a
    boom), along the boom's normal, split at the crotches between them; the parts that fit
    (None for fewer than two such apexes, or parts that are not plumes). `pts`: those
    apexes (K, 2), if already found."""
    from spraycv.geometry.boom import boom_normal  # boom imports this module

    if pts is None:
        pts = collinear(likely.on_outline(blob.pts), likely.tol_px)
    if len(pts) < 2 or np.ptp(pts, axis=0).max() <= 1.0:
        return None
    u = boom_normal(pts, [blob.centroid])
    order = pts[np.argsort(-(pts @ normal_left(u)))]  # along -n_left, as split_blob does
    crotches = crotches_between(blob, u, list(order))
    parts = [
        Plume(
            blob,
            a.copy(),
            u,
            True,
            "boom",
            crotch_left=crotches[j - 1] if j > 0 else None,
            crotch_right=crotches[j] if j < len(crotches) else None,
            merged=True,
        )
        for j, a in enumerate(order)
    ]
    for p in parts:
        p.refit(opts)
    parts = [p for p in parts if p.fit is not None and p.fit.ok]
    return parts if len(parts) >= 2 and sizeable(parts) else None


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


def read_along_axis(
    blob: Blob, u: np.ndarray, source: str, cfg: GeometryConfig, opts: FitOptions
) -> list[Plume]:
    """Plumes of a blob whose axis is known: split at the back profile's V minima unless
    reading the blob as one plume is as good (bumps of droplets also make small V's)."""
    parts = split_blob(blob, u, True, source, cfg)
    for p in parts:
        p.refit(opts)
    if len(parts) == 1:
        return parts
    back = blob.hull[int(np.argmin(blob.hull @ u))]
    single = Plume(blob, back, u, True, source)
    single.refit(opts)
    single_score = worst_score([single])
    if math.isfinite(single_score) and not tip_ok(single, cfg):
        single_score += TUNING.off_outline_px  # apex off the outline: a virtual apex
    lonely = math.isfinite(single_score) and explained_fraction(single) < TUNING.min_explained
    finite = math.isfinite(single_score)
    margin = TUNING.lonely_margin_px if lonely or not finite else TUNING.as_straight_px
    if worst_score(parts) <= single_score + margin and sizeable(parts):
        return parts
    return [single]


def tip_ok(plume: Plume, cfg: GeometryConfig) -> bool:
    """The fitted apex is at the tip of the outline (or the outline is cut by the border)."""
    fit = plume.fit
    if fit is None or fit.dir_left is None or fit.dir_right is None:
        return False
    s = (plume.blob.pts - plume.apex) @ plume.axis
    inc = math.degrees(math.acos(float(np.clip(fit.dir_left @ fit.dir_right, -1.0, 1.0))))
    gap = float(s.min())
    if not plume.blob.usable.all() and gap > 0:
        return gap <= TUNING.border_gap_frac * float(s.max())
    allowed = float(tip_allowance(np.array([inc]), cfg.open_px)[0])
    return -TUNING.apex_on_outline_px <= gap <= allowed


def sizeable(parts: list[Plume]) -> bool:
    """Split parts are real plumes, not droplet bumps: each is fitted and long enough."""
    lengths = [p.fit.length if p.fit is not None and p.fit.ok else 0.0 for p in parts]
    return min(lengths) >= TUNING.min_part_length_frac * max(lengths) > 0


def boom_notch(notch: Notch, single: Plume) -> bool:
    """Whether a notch next to a clean single wedge can be the crotch with a merged neighbour.

    The hull edge bridging such a notch runs along the boom, from this apex to the
    neighbour's, both about level along the axis; dents of the front and the hollows along
    a bent boundary are bridged by edges that run far along the axis.
    """
    length = single.fit.length if single.fit is not None else 0.0
    reach = max(TUNING.notch_reach_px, TUNING.notch_reach_frac * length)
    if notch.distance_to_edge(single.apex) > reach:
        return False
    s = [abs(float((p - single.apex) @ single.axis)) for p in (notch.a, notch.b)]
    return max(s) <= TUNING.notch_level_frac * length


def opens(plume: Plume) -> bool:
    """The fitted wedge opens forward: positive included angle, plume ahead of the apex."""
    fit = plume.fit
    if fit is None or fit.dir_left is None or fit.dir_right is None or fit.length <= 0:
        return False
    n = normal_left(fit.axis)
    return float(fit.dir_left @ n) > 0 > float(fit.dir_right @ n)


def explained_fraction(plume: Plume) -> float:
    """Fraction of the blob's outline inside the plume's wedge (with room for bends)."""
    fit = plume.fit
    if fit is None or fit.left is None or fit.right is None:
        return 0.0
    pts = plume.blob.pts[:: TUNING.explained_stride]
    tol = max(TUNING.explained_tol_px, TUNING.explained_tol_frac * fit.length)
    inside = (pts - plume.apex) @ plume.axis >= -tol
    for line, sign in ((fit.left, 1.0), (fit.right, -1.0)):
        d = line.direction
        out = sign * np.array([-d[1], d[0]])  # away from the spray
        inside &= (pts - line.point) @ out <= tol
    return float(inside.mean())


def parallel(plumes: list[Plume], cfg: GeometryConfig) -> bool:
    """Merged plumes come from one boom: their (bisector) axes agree within the boom
    tolerance; a ragged blob split at a droplet's notch gives wedges pointing anywhere."""
    axes = np.array([p.axis for p in plumes if p.fit is not None and p.fit.ok])
    if len(axes) < len(plumes):
        return False
    mean = axes.sum(axis=0)
    mean /= max(float(np.hypot(*mean)), 1e-12)
    return bool((axes @ mean).min() >= math.cos(math.radians(cfg.boom_axis_tol_deg)))


def worst_score(plumes: list[Plume]) -> float:
    """The worst plume's straightness (px), inf if one could not be fitted."""
    return max(p.fit.straightness() if p.fit is not None else math.inf for p in plumes)
