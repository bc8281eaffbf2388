"""Fit one plume's wedge: band -> boundary lines -> apex (their intersection) -> refit.

All arrays are float64 image coordinates (x, y) of pixel centres. `s` is the distance along
the axis from the apex, `t` the signed distance towards n_left = (-uy, ux) (docs/cone_angle.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from spraycv.config.geometry import BandConfig, GeometryConfig
from spraycv.geometry.linefit import LineFit, intersect, robust_group_lines
from spraycv.geometry.tuning import TUNING

Limit = tuple[float, float]  # a crotch as (s, t) in a plume's frame


@dataclass(frozen=True)
class FitOptions:
    """What a wedge fit needs from GeometryConfig, and the image scale for a band in mm."""

    band: BandConfig
    method: str
    outlier_px: float
    ransac_iterations: int
    min_edge_points: int
    refits: int
    mm_per_px: float | None

    @staticmethod
    def of(cfg: GeometryConfig, mm_per_px: float | None) -> FitOptions:
        return FitOptions(
            band=cfg.band,
            method=cfg.robust_fit,
            outlier_px=cfg.outlier_px,
            ransac_iterations=cfg.ransac_iterations,
            min_edge_points=cfg.min_edge_points,
            refits=cfg.max_refits,
            mm_per_px=mm_per_px,
        )


@dataclass(frozen=True)
class WedgeFit:
    """Result of fit_wedge; left/right are None where a side had too few points (then
    dir_left/dir_right keep the directions of the round before, if any)."""

    apex: np.ndarray
    axis: np.ndarray
    left: LineFit | None
    right: LineFit | None
    dir_left: np.ndarray | None
    dir_right: np.ndarray | None
    length: float
    band: tuple[float, float]
    n_left: int
    n_right: int
    short_band: bool

    @property
    def ok(self) -> bool:
        return self.left is not None and self.right is not None

    def straightness(self) -> float:
        """Worse side's straightness (px): inlier RMS plus TUNING.outlier_penalty_px per unit
        fraction of outliers; low for a real apex, high for a far corner or a notch; inf
        where a side could not be fitted."""
        if self.left is None or self.right is None:
            return math.inf
        penalty = TUNING.outlier_penalty_px
        return max(
            line.rms + penalty * (1.0 - line.inlier_frac) for line in (self.left, self.right)
        )


def normal_left(u: np.ndarray) -> np.ndarray:
    """n_left = (-uy, ux)."""
    return np.array([-u[1], u[0]])


def half_angles(dl: np.ndarray, dr: np.ndarray, u: np.ndarray) -> tuple[float, float]:
    """(left, right) half angles (deg) of the unit side directions dl, dr (2,) from the unit
    axis u (2,): positive where each side opens away from u on its own side."""
    n = normal_left(u)
    return (
        math.degrees(math.atan2(float(dl @ n), float(dl @ u))),
        math.degrees(math.atan2(-float(dr @ n), float(dr @ u))),
    )


def _explicit_band(band: BandConfig, mm_per_px: float | None) -> tuple[float, float] | None:
    """The band set in px, else in mm (converted), else None (fractions of L apply)."""
    if band.start_px is not None and band.end_px is not None:
        return band.start_px, band.end_px
    if band.start_mm is None or band.end_mm is None:
        return None
    if mm_per_px is None:
        raise ValueError("the band is given in mm (start_mm/end_mm): set hints.mm_per_px")
    return band.start_mm / mm_per_px, band.end_mm / mm_per_px


def band_limits(length: float, band: BandConfig, mm_per_px: float | None) -> tuple[float, float]:
    """(start_px, end_px) of the band for a plume of length L px (docs/cone_angle.md)."""
    explicit = _explicit_band(band, mm_per_px)
    start, end = explicit or (band.start_frac * length, band.end_frac * length)
    return max(start, band.min_start_px), end


def argmax_per_group(group: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Index of the largest value (N,) within each group (N,) of integer labels.

    A dense np.maximum.at over the label range, then the points reaching their group's
    maximum (one per group, the first on ties); far cheaper than sorting.
    """
    if group.size == 0:
        return np.zeros(0, dtype=np.intp)
    gi = group - group.min()
    best = np.full(int(gi.max()) + 1, -np.inf)
    np.maximum.at(best, gi, value)
    hit = np.flatnonzero(value >= best[gi])
    if hit.size > np.count_nonzero(np.isfinite(best)):  # ties: keep the first of each group
        _, first = np.unique(gi[hit], return_index=True)
        hit = hit[first]
    return hit


def _select(
    s: np.ndarray,
    t: np.ndarray,
    band: tuple[float, float],
    limits: tuple[Limit | None, Limit | None],
    opts: FitOptions,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Boundary points of both sides: (indices (K,), side (K,) 0 left / 1 right, short).

    s, t: (N,) the points in the plume's frame. Per side, the points inside the band.
    limits: per side, the crotch with a merged neighbour as (s, t) in this plume's frame;
    the side then stops before it, and if too little is left in the band it is extended
    towards the apex (short = True).
    """
    side = (t < 0).astype(np.intp)
    out = np.abs(t)  # outward distance from the axis, on either side (as -t where t < 0)
    lo = np.array([band[0], band[0]])
    hi = np.array([band[1], band[1]])
    tmax = np.array([np.inf, np.inf])
    for k, lim in enumerate(limits):
        if lim is not None:
            hi[k] = min(hi[k], lim[0] - TUNING.crotch_margin_px)
            tmax[k] = abs(lim[1])
    sel = _in_band(s, out, side, lo, hi, tmax)
    short = False
    if limits[0] is not None or limits[1] is not None:
        counts = np.bincount(side[sel], minlength=2)
        for k, lim in enumerate(limits):
            if lim is not None and (
                hi[k] - lo[k] < TUNING.min_side_band_px or counts[k] < opts.min_edge_points
            ):
                # the neighbour hides this side beyond the crotch: use what is visible before
                lo[k] = opts.band.min_start_px
                short = True
        if short:
            sel = _in_band(s, out, side, lo, hi, tmax)
    idx = np.flatnonzero(sel)
    return idx, side[idx], short


def _in_band(
    s: np.ndarray,
    out: np.ndarray,
    side: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    tmax: np.ndarray,
) -> np.ndarray:
    """Whether each point (N,) lies in its side's band: 0 < out < tmax and lo <= s <= hi.

    s, out, side: (N,); lo, hi, tmax: (2,) per side (0 left, 1 right). A bound both sides
    share is compared as a scalar (no per-point lookup of it).
    """

    def bound(v: np.ndarray) -> np.ndarray:
        return v[0] if v[0] == v[1] else v[side]

    sel = out > 0
    sel &= out < bound(tmax)
    sel &= s >= bound(lo)
    sel &= s <= bound(hi)
    return sel


@dataclass(frozen=True)
class BandPoints:
    """The band's boundary points for one apex and axis: the spray length L (px), the band
    (start, end) in px, the points' indices (K,) into the usable points and their side (K,)
    (0 left, 1 right), whether a merged neighbour made a side reach back (short), and how
    many points each side has."""

    length: float
    band: tuple[float, float]
    idx: np.ndarray
    side: np.ndarray
    short: bool
    n_left: int
    n_right: int

    def enough(self, min_points: int) -> bool:
        """Both sides have min_points points to fit a line through."""
        return self.n_left >= min_points and self.n_right >= min_points


def _points_and_axis(
    pts: np.ndarray, apex: np.ndarray, axis: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(apex (2,), unit axis (2,), x (N,), y (N,)) as float64, the coordinates contiguous."""
    u = np.asarray(axis, dtype=np.float64)
    return (
        np.asarray(apex, dtype=np.float64),
        u / np.hypot(u[0], u[1]),
        np.ascontiguousarray(pts[:, 0]),
        np.ascontiguousarray(pts[:, 1]),
    )


def _band_points(
    px: np.ndarray,
    py: np.ndarray,
    hull: np.ndarray,
    apex: np.ndarray,
    u: np.ndarray,
    opts: FitOptions,
    crotches: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
    all_pts: np.ndarray | None = None,
) -> BandPoints:
    """The band's boundary points for the current apex and axis u (2,). px, py: (N,) the
    usable boundary points."""
    ux, uy = float(u[0]), float(u[1])
    s = px * ux + py * uy - (apex[0] * ux + apex[1] * uy)
    t = py * ux - px * uy - (apex[1] * ux - apex[0] * uy)  # towards n_left = (-uy, ux)
    frame = np.array([[ux, -uy], [uy, ux]])  # columns: u, n_left
    lim_l, lim_r = (None if c is None else tuple((c - apex) @ frame) for c in crotches)
    if (lim_l is not None or lim_r is not None) and all_pts is not None:
        # a merged plume's length: over its own lateral range of the whole contour
        st = (all_pts - apex) @ frame
        own = np.ones(len(st), dtype=bool)
        if lim_l is not None:
            own &= st[:, 1] <= lim_l[1]
        if lim_r is not None:
            own &= st[:, 1] >= lim_r[1]
        length = float(st[own, 0].max()) if own.any() else 0.0
    else:
        length = float((hull @ u).max() - apex @ u)
    band = band_limits(length, opts.band, opts.mm_per_px)
    idx, side, short = _select(s, t, band, (lim_l, lim_r), opts)  # type: ignore[arg-type]
    n_left = int(np.count_nonzero(side == 0))
    return BandPoints(length, band, idx, side, short, n_left, int(side.size) - n_left)


def _towards_band(
    px: np.ndarray, py: np.ndarray, bp: BandPoints, apex: np.ndarray, u: np.ndarray
) -> np.ndarray:
    """The unit direction (2,) from the apex (2,) to the mean of the band's points (px, py
    (N,) at bp.idx); u (2,) where the band holds none or their mean sits on the apex."""
    if bp.idx.size == 0:
        return u
    d = np.array([px[bp.idx].mean() - apex[0], py[bp.idx].mean() - apex[1]])
    norm = float(np.hypot(d[0], d[1]))
    return d / norm if norm > 1e-9 and d @ u > 0 else u


def _side_lines(
    px: np.ndarray,
    py: np.ndarray,
    idx: np.ndarray,
    side: np.ndarray,
    u: np.ndarray,
    opts: FitOptions,
) -> tuple[LineFit, LineFit]:
    """Robust (left, right) boundary lines through the band points idx (K,) of each side,
    directed away from the apex and moved out to the pixels' edge."""
    ux, uy = float(u[0]), float(u[1])
    nl = np.array([-uy, ux])
    lines, inl, inward = robust_group_lines(
        px[idx],
        py[idx],
        side,
        2,
        opts.method,
        opts.outlier_px,
        opts.ransac_iterations,
        outward=np.array([nl, -nl]),
    )
    n_pts = np.bincount(side, minlength=2)
    n_in = np.bincount(side[inl], minlength=2)
    n_inward = np.bincount(side[inward], minlength=2)
    fits = []
    for k in (0, 1):
        d = np.array([lines.dx[k], lines.dy[k]])
        d = d if d @ u >= 0 else -d  # away from the apex
        # contour points are centres of the plume's outermost pixels, on average
        # max(|dx|, |dy|) / 2 inside the true boundary: move the line out by that
        out = np.array([-d[1], d[0]]) if k == 0 else np.array([d[1], -d[0]])
        point = np.array([lines.cx[k], lines.cy[k]]) + 0.5 * max(abs(d[0]), abs(d[1])) * out
        fits.append(
            LineFit(point, d, float(lines.rms[k]), int(n_pts[k]), int(n_in[k]), int(n_inward[k]))
        )
    return fits[0], fits[1]


def fit_wedge(
    pts: np.ndarray,
    hull: np.ndarray,
    apex: np.ndarray,
    axis: np.ndarray,
    fixed_axis: bool,
    opts: FitOptions,
    crotch_left: np.ndarray | None = None,
    crotch_right: np.ndarray | None = None,
    all_pts: np.ndarray | None = None,
) -> WedgeFit:
    """Iterate band -> robust boundary lines -> apex = their intersection (-> bisector axis).

    pts: (N, 2) usable boundary points (contour off the image border); hull: (K, 2) convex
    hull of the component, whose extreme along the axis gives the spray length L. apex, axis:
    (2,) initial estimates; with fixed_axis the axis stays (hint or boom), otherwise it
    becomes the bisector of the two lines. crotch_left/right: (2,) points where a merged
    neighbour's boundary meets this plume's; the contour beyond them is the neighbour's
    (then all_pts, the whole contour, bounds L within this plume's lateral range).
    """
    apex, u, px, py = _points_and_axis(pts, apex, axis)
    left = right = dl = dr = None
    crotches = (crotch_left, crotch_right)
    for k in range(opts.refits):  # at least one (GeometryConfig.max_refits >= 1)
        bp = _band_points(px, py, hull, apex, u, opts, crotches, all_pts)
        if k == 0 and not fixed_axis and not bp.enough(opts.min_edge_points):
            # a narrow plume the first axis misses by more than its half angle lies wholly
            # on one side of it: start again along the band points' own direction
            u = _towards_band(px, py, bp, apex, u)
            bp = _band_points(px, py, hull, apex, u, opts, crotches, all_pts)
        if not bp.enough(opts.min_edge_points):
            left = right = None  # the directions of the previous round stay, as they were
            break
        left, right = _side_lines(px, py, bp.idx, bp.side, u, opts)
        dl, dr = left.direction, right.direction
        new_apex = intersect(left.point, dl, right.point, dr)
        if new_apex is None:
            break
        new_u = u
        if not fixed_axis:
            bis = dl + dr
            new_u = bis / np.hypot(bis[0], bis[1])
        moved = float(np.hypot(*(new_apex - apex)))
        turned = abs(float(new_u[0] * u[1] - new_u[1] * u[0]))
        apex, u = new_apex, new_u
        if moved < TUNING.converged_px and turned < TUNING.converged_sin:
            break  # the band would move by a fraction of a pixel
    return WedgeFit(
        apex, u, left, right, dl, dr, bp.length, bp.band, bp.n_left, bp.n_right, bp.short
    )


def fit_pinned(
    pts: np.ndarray, hull: np.ndarray, apex: np.ndarray, axis: np.ndarray, opts: FitOptions
) -> WedgeFit:
    """A wedge whose apex stays at `apex` (2,) (a sure apex-head peak), for a blob whose free
    fit runs away from it: on a ragged wide plume, or one a fixture merged into, two lines
    fitted freely can meet anywhere. Each side's boundary is the line from the apex along the
    median direction of its band points (inliers within opts.outlier_px of it averaged); the
    axis becomes their bisector. pts: (N, 2) usable boundary points; hull: (K, 2)."""
    apex, u, px, py = _points_and_axis(pts, apex, axis)
    left = right = None
    for _ in range(opts.refits):  # at least one
        bp = _band_points(px, py, hull, apex, u, opts)
        if not bp.enough(opts.min_edge_points):
            left = right = None
            break
        left, right = (_pinned_line(pts[bp.idx[bp.side == k]], apex, u, k, opts) for k in (0, 1))
        bis = left.direction + right.direction
        new_u = bis / max(float(np.hypot(bis[0], bis[1])), 1e-12)
        turned = abs(float(new_u[0] * u[1] - new_u[1] * u[0]))
        u = new_u
        if turned < TUNING.converged_sin:
            break
    dl = None if left is None else left.direction
    dr = None if right is None else right.direction
    return WedgeFit(apex, u, left, right, dl, dr, bp.length, bp.band, bp.n_left, bp.n_right, False)


def _pinned_line(
    side_pts: np.ndarray, apex: np.ndarray, u: np.ndarray, side: int, opts: FitOptions
) -> LineFit:
    """The boundary line through apex (2,) of one side (0 left, 1 right) from its band
    points (K, 2): the median angle from the axis, then the mean over the points within
    opts.outlier_px of that line."""
    outward = normal_left(u) if side == 0 else -normal_left(u)
    rel = side_pts - apex
    s, t = rel @ u, rel @ outward
    phi = np.arctan2(t, s)  # angle from the axis, outwards
    r = np.hypot(s, t)
    dist = r * np.sin(phi - float(np.median(phi)))  # signed, outwards
    inl = np.abs(dist) <= opts.outlier_px
    ang = float(phi[inl].mean()) if inl.any() else float(np.median(phi))
    dist = r * np.sin(phi - ang)
    inl = np.abs(dist) <= opts.outlier_px
    rms = float(np.sqrt(np.mean(dist[inl] ** 2))) if inl.any() else math.inf
    direction = math.cos(ang) * u + math.sin(ang) * outward
    inward = int((dist < -opts.outlier_px).sum())  # as robust_group_lines counts them
    return LineFit(apex.copy(), direction, rms, len(side_pts), int(inl.sum()), inward)


def width_profile(
    pts: np.ndarray,
    apex: np.ndarray,
    u: np.ndarray,
    step: float,
    t_range: tuple[float, float] = (-np.inf, np.inf),
) -> np.ndarray:
    """(M, 2) array of (s_px, width_px): the plume's extent across the axis per step of s.

    pts: (N, 2) contour of the component; t_range: the plume's lateral range (merged plumes).
    """
    rel = pts - apex
    if rel.size == 0:
        return np.zeros((0, 2))
    s = rel @ u
    t = rel @ normal_left(u)
    keep = (s >= 0) & (t >= t_range[0]) & (t <= t_range[1])
    s, t = s[keep], t[keep]
    if s.size == 0:
        return np.zeros((0, 2))
    bins = np.floor(s / step).astype(np.int64)
    nb = int(bins.max()) + 1
    tmax = np.full(nb, -np.inf)
    tmin = np.full(nb, np.inf)
    np.maximum.at(tmax, bins, t)
    np.minimum.at(tmin, bins, t)
    ok = np.isfinite(tmax)
    centres = (np.arange(nb) + 0.5) * step
    return np.column_stack([centres[ok], (tmax - tmin)[ok]])
