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

from spraycv.geometry.linefit import GroupLines, robust_group_lines
from spraycv.geometry.plumes import Blob
from spraycv.geometry.wedge import argmax_per_group

MAX_CANDIDATES = 8
SEARCH_STRIDE = 2  # every other contour point is plenty to rank candidates
OUTLIER_PENALTY_PX = 5.0  # score added per unit fraction of a side's points left out
DROPPED_WEIGHT = 0.2  # outside points (droplets) count this much against a side
MIN_BALANCE = 0.25  # fewer points on one side than this fraction of the other's: penalised
OUTSIDE_PENALTY_PX = 0.5  # an apex off the image is possible (nozzle out of frame), but rare
TIP_PENALTY_PX = 1.0  # at most, for an apex well behind the outline (merged plumes' virtual apex)
APEX_ON_OUTLINE_PX = 4.0


@dataclass(frozen=True)
class LikelyApexes:
    """Where apexes probably are (points (K, 2), e.g. peaks of a model's apex heatmap).

    A candidate apex further than max(tol_px, tol_frac * plume extent) from all of them is
    ranked `penalty_px` worse, but only where some candidate of the plume is near one: a
    plume whose apex the detector missed is searched as without them.
    """

    points: np.ndarray
    penalty_px: float
    tol_px: float
    tol_frac: float
    reach_px: float = 25.0  # on_outline: a model mask's tip often stops short of the nozzle

    def on_outline(self, outline: np.ndarray) -> np.ndarray:
        """The points (K', 2) within reach_px of an outline (N, 2)."""
        if len(self.points) == 0:
            return self.points
        d = np.hypot(*(self.points[:, None, :] - outline[None, ::2, :]).transpose(2, 0, 1))
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
    """Best wedge found: apex (2,), axis (2,), score (worse side's RMS plus penalties, px),
    band points per side, included angle (deg)."""

    apex: np.ndarray
    axis: np.ndarray
    score: float
    n_left: int
    n_right: int
    included_deg: float
    tip_ok: bool  # the apex is inside the image, at the tip of the outline


def hull_corners(
    hull: np.ndarray, max_corners: int = MAX_CANDIDATES
) -> tuple[np.ndarray, np.ndarray]:
    """Corners of the simplified hull (K, 2), sharpest first, at most max_corners.

    Returns (corners (M, 2), inward bisectors of their hull angles (M, 2), zero where the
    hull is nearly straight). At a spray's apex the two hull edges are the spray's
    boundaries, so the bisector is already close to the axis, whatever the blob's shape.
    """
    h32 = hull.astype(np.float32).reshape(-1, 1, 2)
    eps = max(1.5, 0.01 * cv2.arcLength(h32, True))
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
    bis = np.where(norm[:, None] > 0.05, bis / np.maximum(norm, 1e-12)[:, None], 0.0)
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
    ok = (n >= 5) & (np.abs(det) > 1e-9)
    c2 = np.where(ok, det2 / np.where(ok, det, 1.0), 0.0)
    safe = np.maximum(n, 1.0)
    var_a = np.maximum(s2 / safe - (s1 / safe) ** 2, 0.0)
    return np.abs(c2) * 3.0 * var_a


def batch_wedges(
    pts: np.ndarray,
    hull: np.ndarray,
    apex: np.ndarray,
    axis: np.ndarray,
    fracs: tuple[float, float],
    min_start_px: float,
    min_points: int,
    outlier_px: float,
    iterations: int = 2,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Refine C wedge candidates at once.

    pts: (N, 2) boundary points; hull: (K, 2); apex, axis: (C, 2) starting points.
    Returns (apex (C, 2), axis (C, 2), score (C, 2) left/right, counts (C, 2)): a side's
    score is its inlier RMS (px) plus OUTLIER_PENALTY_PX times its fraction of outliers,
    inf for a candidate with too few points on a side, and included angles (C,) in deg.
    """
    c_n = len(apex)
    ng = 2 * c_n
    apex = apex.copy()
    u = axis / np.hypot(axis[:, 0], axis[:, 1])[:, None]
    rms = np.full((c_n, 2), np.inf)
    cnt = np.zeros((c_n, 2))
    inc = np.zeros(c_n)
    alive = np.ones(c_n, dtype=bool)
    px = np.ascontiguousarray(pts[:, 0])
    py = np.ascontiguousarray(pts[:, 1])
    pt = np.stack([px, py])  # (2, N)
    n_pts = px.size
    for it in range(iterations):
        last = it == iterations - 1
        nl = np.empty_like(u)
        nl[:, 0], nl[:, 1] = -u[:, 1], u[:, 0]
        # (C, N) projections along and across each axis in one small matrix product
        st = np.concatenate([u, nl]) @ pt
        st -= np.concatenate([(u * apex).sum(axis=1), (nl * apex).sum(axis=1)])[:, None]
        s, t = st[:c_n], st[c_n:]
        hp = u @ hull.T
        length = hp.max(axis=1) - (u * apex).sum(axis=1)
        # the plume lies ahead of a real apex: most of its extent along the axis is in front
        alive &= length >= 0.5 * (hp.max(axis=1) - hp.min(axis=1))
        lo = np.maximum(fracs[0] * length, min_start_px)
        hi = fracs[1] * length
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
        g, p = g[sel], pi[sel]
        outward = np.repeat(nl, 2, axis=0) * np.tile([1.0, -1.0], c_n)[:, None]
        lines, inl, inward = robust_group_lines(
            px[p], py[p], g, ng, "lsq", outlier_px, outward=outward, rounds=2 if last else 1
        )
        total = np.bincount(g, minlength=ng)
        n = total.reshape(c_n, 2)
        cen = np.empty((ng, 2))
        cen[:, 0], cen[:, 1] = lines.cx, lines.cy
        cen = cen.reshape(c_n, 2, 2)
        d = np.empty((ng, 2))
        d[:, 0], d[:, 1] = lines.dx, lines.dy
        d = d.reshape(c_n, 2, 2)
        ok = alive & (n >= min_points).all(axis=1)
        # orient both boundary directions away from the apex, then intersect them
        flip = (d[:, :, 0] * u[:, None, 0] + d[:, :, 1] * u[:, None, 1]) < 0
        d = np.where(flip[:, :, None], -d, d)
        dl, dr = d[:, 0], d[:, 1]
        den = dl[:, 0] * dr[:, 1] - dl[:, 1] * dr[:, 0]
        ok &= np.abs(den) > 1e-9
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
        ok &= cos_inc > -0.9995
        alive &= ok
        cnt = n
        if last:
            # points inside the line mean curvature or a notch: heavily penalised; points
            # dropped outside are droplets or ligaments: lightly; a bowed side is a front;
            # a real wedge's sides span the same band: a lopsided pair is a corner's artefact
            dropped = 1.0 - np.bincount(g[inl], minlength=ng) / np.maximum(total, 1)
            inside = np.bincount(g[inward], minlength=ng) / np.maximum(total, 1)
            outliers = inside + DROPPED_WEIGHT * dropped
            bend = sagitta(px[p][inl], py[p][inl], g[inl], ng, lines)
            side_score = (lines.rms + OUTLIER_PENALTY_PX * outliers + bend).reshape(c_n, 2)
            balance = n.min(axis=1) / np.maximum(n.max(axis=1), 1)
            lopsided = np.clip(1.0 - balance / MIN_BALANCE, 0.0, 1.0)
            side_score += (OUTLIER_PENALTY_PX * lopsided)[:, None]
            rms = np.where(alive[:, None], side_score, np.inf)
        if not alive.any():
            break
    hp = u @ hull.T  # the last update must leave the plume ahead of the apex, too
    ahead = hp.max(axis=1) - (u * apex).sum(axis=1) >= 0.5 * (hp.max(axis=1) - hp.min(axis=1))
    rms = np.where(ahead[:, None], rms, np.inf)
    return apex, u, rms, cnt, inc


def search_wedge(
    blob: Blob,
    fracs: tuple[float, float],
    min_start_px: float,
    min_points: int,
    outlier_px: float,
    shape: tuple[int, int],
    open_px: int = 3,
    prior: tuple[tuple[float, float], float] | None = None,
    likely: LikelyApexes | None = None,
) -> Candidate | None:
    """The hull corner that makes the straightest wedge (None if no corner makes one).

    Ties between the apex and a far corner whose front happens to be straight are broken
    against apexes outside the image (shape (H, W)) and apexes well behind the outline, and,
    with `likely` apexes (say from a model's apex head), against candidates far from all of
    them; that last term only ranks the candidates and is left out of the returned score.
    """
    corners, bisectors = hull_corners(blob.hull)
    # two starts per corner: the hull angle's bisector and, where it differs by more than
    # the search can correct in one step, the direction to the centroid
    to_centroid = blob.centroid[None, :] - corners
    to_centroid /= np.maximum(np.hypot(to_centroid[:, 0], to_centroid[:, 1]), 1e-12)[:, None]
    differ = (to_centroid * bisectors).sum(axis=1) < math.cos(math.radians(15.0))
    corners = np.concatenate([corners, corners[differ]])
    axes = np.concatenate([bisectors, to_centroid[differ]])
    norm = np.hypot(axes[:, 0], axes[:, 1])
    keep = norm > 1e-6
    corners, axes = corners[keep], axes[keep]
    if len(corners) == 0:
        return None
    pts = blob.fit_pts[::SEARCH_STRIDE]
    apex, u, rms, cnt, inc = batch_wedges(
        pts, blob.hull, corners, axes, fracs, min_start_px, min_points, outlier_px
    )
    raw = rms.max(axis=1)
    h, w = shape
    inside = (apex[:, 0] >= -0.5) & (apex[:, 0] <= w - 0.5)
    inside &= (apex[:, 1] >= -0.5) & (apex[:, 1] <= h - 0.5)
    s = u @ blob.hull.T - (u * apex).sum(axis=1)[:, None]  # (C, K) hull along each axis
    gap, length = s.min(axis=1), s.max(axis=1)
    allowed = tip_allowance(inc, open_px)
    behind = np.clip((gap - allowed) / np.maximum(0.1 * length, 1.0), 0.0, 1.0)
    score = raw + np.where(inside, TIP_PENALTY_PX * behind, OUTSIDE_PENALTY_PX)
    if prior is not None and prior[1] > 0:  # break near-ties towards the usual direction
        d = np.asarray(prior[0], dtype=float)
        d /= max(float(np.hypot(d[0], d[1])), 1e-12)
        score = score + prior[1] * 0.5 * (1.0 - u @ d)
    rank = score if likely is None else score + likely.penalty(apex, blob.hull)
    best = int(np.argmin(rank))
    if not np.isfinite(score[best]):
        return None
    return Candidate(
        apex=apex[best],
        axis=u[best],
        score=float(score[best]),
        n_left=int(cnt[best, 0]),
        n_right=int(cnt[best, 1]),
        included_deg=float(inc[best]),
        tip_ok=bool(inside[best] and gap[best] <= allowed[best]),
    )


def tip_allowance(included_deg: np.ndarray, open_px: int) -> np.ndarray:
    """How far (px) the outline may start ahead of a true apex: the opening blunts the tip
    where the wedge is narrower than about the kernel, (open / 2 + 1) / tan(half-angle)."""
    half = np.radians(np.maximum(np.asarray(included_deg, dtype=np.float64), 1.0)) / 2
    return np.maximum(APEX_ON_OUTLINE_PX, (0.5 * open_px + 1.0) / np.tan(half))
