"""Apex and axis of a plume without hints: score every hull corner as a wedge, in one batch.

For any spray direction the apex is a corner of the convex hull. From each corner (axis
towards the centroid to start) the batch fits the two boundaries on a search band by least
squares, moves the apex to their intersection and the axis to their bisector, and repeats.
The corner whose two boundaries come out straightest wins: a far corner of the plume has
one ragged or curved side (the front), and the principal axis or the sharpest corner would
mislead for wide sprays. All candidates are processed together with numpy (no Python loop
over points or candidates), so the search costs about as much as one single fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob
from spraycv.geometry.linefit import GroupLines, robust_group_lines
from spraycv.geometry.tuning import TUNING
from spraycv.geometry.wedge import argmax_per_group


@dataclass(frozen=True)
class LikelyApexes:
    """Where apexes probably are (points (K, 2), e.g. peaks of a model's apex heatmap).

    A candidate apex further than max(tol_px, tol_frac * plume extent) from all of them is
    ranked `penalty_px` worse, but only where some candidate of the plume is near one: a
    plume whose apex the detector missed is searched as without them. `reach_px`: how far
    from an outline a point still belongs to it (a model mask's tip often stops short of
    the nozzle). `weights` (K,) in [0, 1]: how much each point counts (its strength over
    the full strength, at most 1); None: every one fully.
    """

    points: np.ndarray
    penalty_px: float
    tol_px: float
    tol_frac: float
    reach_px: float
    weights: np.ndarray | None = None

    def weight_of(self, pts: np.ndarray) -> np.ndarray:
        """(K',) weights of pts (K', 2), a subset of the points (the nearest one's)."""
        if self.weights is None or len(pts) == 0:
            return np.ones(len(pts))
        d = np.hypot(*(pts[:, None, :] - self.points[None, :, :]).transpose(2, 0, 1))
        return self.weights[d.argmin(axis=1)]

    def sure(self, pts: np.ndarray) -> np.ndarray:
        """(K',) bool: which of pts (K', 2), a subset of the points, the source is fully sure
        of (weight 1: an apex-head peak at or above the heat of a sure nozzle)."""
        return self.weight_of(pts) >= 1.0

    def on_outline(self, outline: np.ndarray) -> np.ndarray:
        """The points (K', 2) within reach_px of an outline (N, 2)."""
        if len(self.points) == 0:
            return self.points
        sparse = outline[:: TUNING.outline_stride]
        d = np.hypot(*(self.points[:, None, :] - sparse[None, :, :]).transpose(2, 0, 1))
        return self.points[d.min(axis=1) <= self.reach_px]

    def penalty(self, apexes: np.ndarray, hull: np.ndarray) -> np.ndarray:
        """(C,) rank penalty (px) of candidate apexes (C, 2) of the plume with hull (K, 2)."""
        if len(self.points) == 0 or self.penalty_px <= 0:
            return np.zeros(len(apexes))
        tol = max(self.tol_px, self.tol_frac * float(np.ptp(hull, axis=0).max()))
        d = np.hypot(*(apexes[:, None, :] - self.points[None, :, :]).transpose(2, 0, 1))
        near = d.min(axis=1) <= tol
        return np.where(near | ~near.any(), 0.0, self.penalty_px)


@dataclass(frozen=True)
class Candidate:
    """Best wedge found: apex (2,), axis (2,), score (its rank in the search, px: the worse
    side's straightness in the search's own least-squares fit, plus the penalties off the
    tip and off the image; lower is better), band points per side, included angle (deg)."""

    apex: np.ndarray
    axis: np.ndarray
    score: float
    n_left: int
    n_right: int
    included_deg: float
    tip_ok: bool  # the apex is inside the image, at the tip of the outline


def hull_corners(
    hull: np.ndarray, max_corners: int = TUNING.max_candidates
) -> tuple[np.ndarray, np.ndarray]:
    """Corners of the simplified hull (K, 2), sharpest first, at most max_corners.

    Returns (corners (M, 2), inward bisectors of their hull angles (M, 2), zero where the
    hull is nearly straight). At a spray's apex the two hull edges are the spray's
    boundaries, so the bisector is already close to the axis, whatever the blob's shape.
    """
    h32 = hull.astype(np.float32).reshape(-1, 1, 2)
    eps = max(TUNING.hull_simplify_px, TUNING.hull_simplify_frac * cv2.arcLength(h32, True))
    poly = cv2.approxPolyDP(h32, eps, True).reshape(-1, 2).astype(np.float64)
    if len(poly) < 3:
        return poly, np.zeros_like(poly)
    idx = np.arange(len(poly))
    prev = poly[idx - 1] - poly
    nxt = poly[(idx + 1) % len(poly)] - poly
    prev /= np.maximum(np.hypot(prev[:, 0], prev[:, 1]), 1e-12)[:, None]
    nxt /= np.maximum(np.hypot(nxt[:, 0], nxt[:, 1]), 1e-12)[:, None]
    bis = prev + nxt
    norm = np.hypot(bis[:, 0], bis[:, 1])
    corner = norm[:, None] > TUNING.straight_corner_norm
    bis = np.where(corner, bis / np.maximum(norm, 1e-12)[:, None], 0.0)
    order = np.argsort(-(prev * nxt).sum(axis=1))[:max_corners]  # large cosine = sharp
    return poly[order], bis[order]


def sagitta(x: np.ndarray, y: np.ndarray, g: np.ndarray, ng: int, lines: GroupLines) -> np.ndarray:
    """How far (px) each group's points bow away from their line: |c2| * 3 var(a), with
    r = c0 + c1 a + c2 a^2 fitted along the line (a) and across it (r); (ng,).

    A real boundary is straight; a far corner's other side is a curved or ragged front,
    whose bow one-sided trimming (made for droplets) would otherwise hide.
    """
    a = (x - lines.cx[g]) * lines.dx[g] + (y - lines.cy[g]) * lines.dy[g]
    r = lines.residuals(x, y, g)
    a2 = a * a
    n = np.bincount(g, minlength=ng).astype(np.float64)
    s1, s2 = np.bincount(g, a, ng), np.bincount(g, a2, ng)
    s3, s4 = np.bincount(g, a2 * a, ng), np.bincount(g, a2 * a2, ng)
    r0, r1, r2 = np.bincount(g, r, ng), np.bincount(g, a * r, ng), np.bincount(g, a2 * r, ng)
    # Cramer's rule on the 3x3 normal equations, for c2 only
    det = n * (s2 * s4 - s3 * s3) - s1 * (s1 * s4 - s2 * s3) + s2 * (s1 * s3 - s2 * s2)
    det2 = n * (s2 * r2 - r1 * s3) - s1 * (s1 * r2 - r1 * s2) + r0 * (s1 * s3 - s2 * s2)
    ok = (n >= TUNING.bow_min_points) & (np.abs(det) > 1e-9)
    c2 = np.where(ok, det2 / np.where(ok, det, 1.0), 0.0)
    safe = np.maximum(n, 1.0)
    var_a = np.maximum(s2 / safe - (s1 / safe) ** 2, 0.0)
    return np.abs(c2) * 3.0 * var_a


def _ahead(u: np.ndarray, apex: np.ndarray, hull: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L (C,), ahead (C,) bool) of C candidates: the plume's extent along each axis u (C, 2)
    ahead of its apex (C, 2), and whether most of the plume lies ahead, as of a real apex."""
    hp = u @ hull.T
    length = hp.max(axis=1) - (u * apex).sum(axis=1)
    return length, length >= TUNING.ahead_frac * (hp.max(axis=1) - hp.min(axis=1))


def _band_edges(
    pt: np.ndarray,
    u: np.ndarray,
    nl: np.ndarray,
    apex: np.ndarray,
    length: np.ndarray,
    alive: np.ndarray,
    band: tuple[tuple[float, float], float],
) -> tuple[np.ndarray, np.ndarray]:
    """The silhouette's edge points in each live candidate's band: (group (M,) = 2 * candidate
    + side (1 right), point index (M,) into pt (2, N)), the outermost point per group and
    1-px bin of s. u, nl, apex: (C, 2); length, alive: (C,); band: (fractions, min start)."""
    c_n, n_pts = len(u), pt.shape[1]
    # (C, N) projections along and across each axis in one small matrix product
    st = np.concatenate([u, nl]) @ pt
    st -= np.concatenate([(u * apex).sum(axis=1), (nl * apex).sum(axis=1)])[:, None]
    s, t = st[:c_n], st[c_n:]
    (lo_frac, hi_frac), min_start_px = band
    lo = np.maximum(lo_frac * length, min_start_px)
    hi = hi_frac * length
    mid, half = 0.5 * (lo + hi), np.where(alive, 0.5 * (hi - lo), -1.0)
    flat = np.flatnonzero(np.abs(s - mid[:, None]) <= half[:, None])
    ci, pi = np.divmod(flat, n_pts)
    tt = t.ravel()[flat]
    right = tt < 0
    g = 2 * ci + right
    # per (candidate, side, 1-px bin of s): the outermost point, the silhouette's edge
    sb = np.floor(s.ravel()[flat]).astype(np.int64)
    sb -= sb.min() if sb.size else 0
    sel = argmax_per_group(g * (int(sb.max(initial=0)) + 1) + sb, np.where(right, -tt, tt))
    return g[sel], pi[sel]


def _intersect_sides(
    lines: GroupLines, u: np.ndarray, apex: np.ndarray, ok: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each candidate's two lines (groups 2c, 2c + 1) directed away from its apex and
    intersected: (apex (C, 2), bisector axis (C, 2), included angle (C,) deg, ok (C,));
    apex and axis stay where ok (C,) is False or the lines do not make a wedge."""
    c_n = len(u)
    cen = np.empty((2 * c_n, 2))
    cen[:, 0], cen[:, 1] = lines.cx, lines.cy
    cen = cen.reshape(c_n, 2, 2)
    d = np.empty((2 * c_n, 2))
    d[:, 0], d[:, 1] = lines.dx, lines.dy
    d = d.reshape(c_n, 2, 2)
    # orient both boundary directions away from the apex, then intersect them
    flip = (d[:, :, 0] * u[:, None, 0] + d[:, :, 1] * u[:, None, 1]) < 0
    d = np.where(flip[:, :, None], -d, d)
    dl, dr = d[:, 0], d[:, 1]
    den = dl[:, 0] * dr[:, 1] - dl[:, 1] * dr[:, 0]
    ok = ok & (np.abs(den) > 1e-9)
    w = cen[:, 1] - cen[:, 0]
    a = (w[:, 0] * dr[:, 1] - w[:, 1] * dr[:, 0]) / np.where(ok, den, 1.0)
    new_apex = cen[:, 0] + a[:, None] * dl
    bis = dl + dr
    bn = np.hypot(bis[:, 0], bis[:, 1])
    ok &= bn > 1e-9
    apex = np.where(ok[:, None], new_apex, apex)
    u = np.where(ok[:, None], bis / np.maximum(bn, 1e-12)[:, None], u)
    # a real wedge opens by less than 180 deg: both lines must lie ahead of the apex
    cos_inc = np.clip((dl * dr).sum(axis=1), -1.0, 1.0)
    inc = np.degrees(np.arccos(cos_inc))
    ok &= cos_inc > TUNING.widest_wedge_cos
    return apex, u, inc, ok


def _side_scores(
    lines: GroupLines,
    x: np.ndarray,
    y: np.ndarray,
    g: np.ndarray,
    inl: np.ndarray,
    inward: np.ndarray,
) -> np.ndarray:
    """(C, 2) straightness of each candidate's sides (px) from their last fit.

    x, y, g: (M,) the band's edge points and their groups; inl, inward: (M,) from the
    trimmed fit. Points inside the line mean curvature or a notch: heavily penalised;
    points dropped outside are droplets or ligaments: lightly; a bowed side is a front; a
    real wedge's sides span the same band: a lopsided pair is a corner's artefact.
    """
    ng = len(lines.cx)
    total = np.bincount(g, minlength=ng)
    n = total.reshape(-1, 2)
    dropped = 1.0 - np.bincount(g[inl], minlength=ng) / np.maximum(total, 1)
    inside = np.bincount(g[inward], minlength=ng) / np.maximum(total, 1)
    outliers = inside + TUNING.dropped_weight * dropped
    bend = sagitta(x[inl], y[inl], g[inl], ng, lines)
    penalty = TUNING.outlier_penalty_px
    side_score = (lines.rms + penalty * outliers + bend).reshape(-1, 2)
    balance = n.min(axis=1) / np.maximum(n.max(axis=1), 1)
    lopsided = np.clip(1.0 - balance / TUNING.min_balance, 0.0, 1.0)
    side_score += (penalty * lopsided)[:, None]
    return side_score


def batch_wedges(
    pts: np.ndarray,
    hull: np.ndarray,
    apex: np.ndarray,
    axis: np.ndarray,
    fracs: tuple[float, float],
    min_start_px: float,
    min_points: int,
    outlier_px: float,
    iterations: int = TUNING.search_iterations,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Refine C wedge candidates at once.

    pts: (N, 2) boundary points; hull: (K, 2); apex, axis: (C, 2) starting points.
    Returns (apex (C, 2), axis (C, 2), score (C, 2) left/right (_side_scores; inf for a
    candidate with too few points on a side, or no wedge), counts (C, 2), included angles
    (C,) in deg).
    """
    c_n = len(apex)
    apex = apex.copy()
    u = axis / np.hypot(axis[:, 0], axis[:, 1])[:, None]
    rms = np.full((c_n, 2), np.inf)
    cnt = np.zeros((c_n, 2))
    inc = np.zeros(c_n)
    alive = np.ones(c_n, dtype=bool)
    px = np.ascontiguousarray(pts[:, 0])
    py = np.ascontiguousarray(pts[:, 1])
    pt = np.stack([px, py])  # (2, N)
    for it in range(iterations):
        last = it == iterations - 1
        nl = np.empty_like(u)
        nl[:, 0], nl[:, 1] = -u[:, 1], u[:, 0]
        length, ahead = _ahead(u, apex, hull)
        alive &= ahead
        g, p = _band_edges(pt, u, nl, apex, length, alive, (fracs, min_start_px))
        outward = np.repeat(nl, 2, axis=0) * np.tile([1.0, -1.0], c_n)[:, None]
        rounds = TUNING.search_final_trim_rounds if last else TUNING.search_trim_rounds
        lines, inl, inward = robust_group_lines(
            px[p], py[p], g, 2 * c_n, "lsq", outlier_px, outward=outward, rounds=rounds
        )
        n = np.bincount(g, minlength=2 * c_n).reshape(c_n, 2)
        apex, u, inc, ok = _intersect_sides(lines, u, apex, alive & (n >= min_points).all(axis=1))
        alive &= ok
        cnt = n
        if last:
            scores = _side_scores(lines, px[p], py[p], g, inl, inward)
            rms = np.where(alive[:, None], scores, np.inf)
        if not alive.any():
            break
    _, ahead = _ahead(u, apex, hull)  # the last update must leave the plume ahead, too
    rms = np.where(ahead[:, None], rms, np.inf)
    return apex, u, rms, cnt, inc


def _starts(blob: Blob) -> tuple[np.ndarray, np.ndarray]:
    """Starting apexes (C, 2) and axes (C, 2) of the search: two starts per hull corner, the
    hull angle's bisector and, where it differs by more than the search can correct in one
    step, the direction to the centroid."""
    corners, bisectors = hull_corners(blob.hull)
    to_centroid = blob.centroid[None, :] - corners
    to_centroid /= np.maximum(np.hypot(to_centroid[:, 0], to_centroid[:, 1]), 1e-12)[:, None]
    differ = (to_centroid * bisectors).sum(axis=1) < math.cos(math.radians(TUNING.second_start_deg))
    corners = np.concatenate([corners, corners[differ]])
    axes = np.concatenate([bisectors, to_centroid[differ]])
    norm = np.hypot(axes[:, 0], axes[:, 1])
    keep = norm > 1e-6
    return corners[keep], axes[keep]


def _tie_breaks(
    blob: Blob,
    apex: np.ndarray,
    u: np.ndarray,
    inc: np.ndarray,
    cfg: GeometryConfig,
    shape: tuple[int, int],
) -> tuple[np.ndarray, np.ndarray]:
    """(penalty (C,) px, tip_ok (C,)) of candidate wedges (apex, u: (C, 2); inc: (C,) deg):
    against apexes off the image (shape (H, W)), apexes well behind the outline, and axes
    against the usual spray direction (GeometryConfig.direction_prior)."""
    h, w = shape
    inside = (apex[:, 0] >= -0.5) & (apex[:, 0] <= w - 0.5)
    inside &= (apex[:, 1] >= -0.5) & (apex[:, 1] <= h - 0.5)
    s = u @ blob.hull.T - (u * apex).sum(axis=1)[:, None]  # (C, K) hull along each axis
    gap, length = s.min(axis=1), s.max(axis=1)
    allowed = tip_allowance(inc, cfg.open_px)
    scale = np.maximum(TUNING.behind_scale_frac * length, TUNING.behind_scale_min_px)
    behind = np.clip((gap - allowed) / scale, 0.0, 1.0)
    penalty = np.where(inside, TUNING.off_outline_px * behind, TUNING.outside_penalty_px)
    return penalty, inside & (gap <= allowed)


def search_wedges(
    blob: Blob,
    cfg: GeometryConfig,
    shape: tuple[int, int],
    likely: LikelyApexes | None = None,
) -> list[Candidate]:
    """The wedges from every sharp hull corner, straightest first (those that make a wedge).

    Ties between the apex and a far corner whose front happens to be straight are broken
    against apexes outside the image (shape (H, W)) and apexes well behind the outline,
    towards the usual spray direction, and, with `likely` apexes (say from a model's apex
    head), against candidates far from all of them; that last term only ranks the
    candidates and is left out of each returned score.
    """
    corners, axes = _starts(blob)
    return ranked_wedges(blob, corners, axes, cfg, shape, likely)


def wedge_from(
    blob: Blob, point: np.ndarray, cfg: GeometryConfig, shape: tuple[int, int]
) -> Candidate | None:
    """The straightest wedge whose search starts at `point` (2,), e.g. a likely apex that
    is no hull corner (a fixture merged into the plume hides it inside the hull), or one
    whose blunt corner loses to a far corner: the search starts along TUNING.point_starts
    directions and towards the centroid, and ranks as `search_wedges` does."""
    turns = np.linspace(0.0, 2.0 * math.pi, TUNING.point_starts, endpoint=False)
    axes = np.stack([np.sin(turns), np.cos(turns)], axis=1)  # the first one points down
    inward = blob.centroid - point
    if float(np.hypot(*inward)) > 1e-6:
        axes = np.concatenate([axes, inward[None, :]])
    starts = np.repeat(np.asarray(point, dtype=np.float64)[None, :], len(axes), axis=0)
    ranked = ranked_wedges(blob, starts, axes, cfg, shape)
    return ranked[0] if ranked else None


def ranked_wedges(
    blob: Blob,
    starts: np.ndarray,
    axes: np.ndarray,
    cfg: GeometryConfig,
    shape: tuple[int, int],
    likely: LikelyApexes | None = None,
) -> list[Candidate]:
    """The wedges of a search from starting apexes (C, 2) along axes (C, 2), ranked by
    straightness and the tie-breaks of `search_wedges`, best first; starts that make no
    wedge are left out."""
    if len(starts) == 0:
        return []
    pts = blob.fit_pts[:: TUNING.outline_stride]
    apex, u, rms, cnt, inc = batch_wedges(
        pts,
        blob.hull,
        starts,
        axes,
        cfg.search_band,
        cfg.band.min_start_px,
        cfg.min_edge_points,
        cfg.outlier_px,
    )
    penalty, tip_ok = _tie_breaks(blob, apex, u, inc, cfg, shape)
    score = rms.max(axis=1) + penalty
    if cfg.direction_prior_px > 0:  # break near-ties towards the usual direction
        d = np.asarray(cfg.direction_prior, dtype=float)
        d /= max(float(np.hypot(d[0], d[1])), 1e-12)
        score = score + cfg.direction_prior_px * 0.5 * (1.0 - u @ d)
    rank = score if likely is None else score + likely.penalty(apex, blob.hull)
    order = [int(k) for k in np.argsort(rank, kind="stable") if np.isfinite(score[k])]
    return [
        Candidate(
            apex=apex[k],
            axis=u[k],
            score=float(score[k]),
            n_left=int(cnt[k, 0]),
            n_right=int(cnt[k, 1]),
            included_deg=float(inc[k]),
            tip_ok=bool(tip_ok[k]),
        )
        for k in order
    ]


def tip_allowance(included_deg: np.ndarray, open_px: int) -> np.ndarray:
    """How far (px) the outline may start ahead of a true apex: the opening blunts the tip
    where the wedge is narrower than about the kernel, (open / 2 + margin) / tan(half-angle),
    and at least TUNING.apex_on_outline_px."""
    narrowest = TUNING.narrowest_wedge_deg
    half = np.radians(np.maximum(np.asarray(included_deg, dtype=np.float64), narrowest)) / 2
    reach = 0.5 * open_px + TUNING.tip_margin_px
    return np.maximum(TUNING.apex_on_outline_px, reach / np.tan(half))
