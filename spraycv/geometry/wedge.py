"""Fit one plume's wedge: band -> boundary lines -> apex (their intersection) -> refit.

All arrays are float64 image coordinates (x, y) of pixel centres. `s` is the distance along
the axis from the apex, `t` the signed distance towards n_left = (-uy, ux) (docs/cone_angle.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spraycv.config.geometry import BandConfig
from spraycv.geometry.linefit import LineFit, intersect, robust_group_lines

CROTCH_MARGIN_PX = 3.0  # keep clear of the rounded bottom of the notch between merged plumes
MIN_SIDE_BAND_PX = 8.0  # a crotch-limited side shorter than this falls back to min_start_px


@dataclass(frozen=True)
class FitOptions:
    """What a wedge fit needs from GeometryConfig (kept small so the search can vary it)."""

    band: BandConfig
    method: str = "huber"
    outlier_px: float = 3.0
    ransac_iterations: int = 100
    min_edge_points: int = 8
    refits: int = 4
    mm_per_px: float | None = None
    band_fracs: tuple[float, float] | None = None  # overrides band (candidate scoring)
    extremes_only: bool = False  # keep only the outermost point per 1-px step of s


@dataclass
class WedgeFit:
    """Result of fit_wedge; left/right are None where a side had too few points."""

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

    def score(self) -> float:
        """Worse side's straightness (px): inlier RMS plus 5 px per unit fraction of outliers;
        low for a real apex, high for a far corner or a notch."""
        if self.left is None or self.right is None:
            return float("inf")
        return max(line.rms + 5.0 * (1.0 - line.inlier_frac) for line in (self.left, self.right))


def normal_left(u: np.ndarray) -> np.ndarray:
    """n_left = (-uy, ux)."""
    return np.array([-u[1], u[0]])


def band_limits(
    length: float, band: BandConfig, mm_per_px: float | None, fracs: tuple[float, float] | None
) -> tuple[float, float]:
    """(start_px, end_px) of the band for a plume of length L px (docs/cone_angle.md)."""
    if fracs is not None:
        start, end = fracs[0] * length, fracs[1] * length
    elif band.start_px is not None and band.end_px is not None:
        start, end = band.start_px, band.end_px
    elif band.start_mm is not None and band.end_mm is not None:
        if mm_per_px is None:
            raise ValueError("the band is given in mm (start_mm/end_mm): set hints.mm_per_px")
        start, end = band.start_mm / mm_per_px, band.end_mm / mm_per_px
    else:
        start, end = band.start_frac * length, band.end_frac * length
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


def lateral_extremes(s: np.ndarray, t: np.ndarray, outer_sign: float) -> np.ndarray:
    """Indices of the outermost point (max of outer_sign * t) in each 1-px bin of s.

    These are the silhouette's edges across the axis; contour parts inside the silhouette
    (notches between merged plumes, folds of ligaments) are skipped.
    """
    return argmax_per_group(np.floor(s).astype(np.int64), outer_sign * t)


def _select(
    s: np.ndarray,
    t: np.ndarray,
    band: tuple[float, float],
    limits: tuple[tuple[float, float] | None, tuple[float, float] | None],
    opts: FitOptions,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Boundary points of both sides: (indices (K,), side (K,) 0 left / 1 right, short).

    Per side and 1-px bin of s inside the band, the outermost point (silhouette edge).
    limits: per side, the crotch with a merged neighbour as (s, t) in this plume's frame;
    the side then stops before it, and if too little is left in the band it is extended
    towards the apex (short = True).
    """
    side = (t < 0).astype(np.intp)
    out = np.where(side == 1, -t, t)  # outward distance from the axis, on either side
    lo = np.array([band[0], band[0]])
    hi = np.array([band[1], band[1]])
    tmax = np.array([np.inf, np.inf])
    for k, lim in enumerate(limits):
        if lim is not None:
            hi[k] = min(hi[k], lim[0] - CROTCH_MARGIN_PX)
            tmax[k] = abs(lim[1])
    sel = (out > 0) & (out < tmax[side]) & (s >= lo[side]) & (s <= hi[side])
    short = False
    if limits[0] is not None or limits[1] is not None:
        counts = np.bincount(side[sel], minlength=2)
        for k, lim in enumerate(limits):
            if lim is not None and (
                hi[k] - lo[k] < MIN_SIDE_BAND_PX or counts[k] < opts.min_edge_points
            ):
                # the neighbour hides this side beyond the crotch: use what is visible before
                lo[k] = opts.band.min_start_px
                short = True
        if short:
            sel = (out > 0) & (out < tmax[side]) & (s >= lo[side]) & (s <= hi[side])
    idx = np.flatnonzero(sel)
    if idx.size == 0 or not opts.extremes_only:
        return idx, side[idx], short
    sb = np.floor(s[idx]).astype(np.int64)
    sb -= sb.min()
    ext = idx[argmax_per_group(side[idx] * (int(sb.max()) + 1) + sb, out[idx])]
    return ext, side[ext], short


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
    apex = np.asarray(apex, dtype=np.float64)
    u = np.asarray(axis, dtype=np.float64)
    u = u / np.hypot(u[0], u[1])
    px = np.ascontiguousarray(pts[:, 0])
    py = np.ascontiguousarray(pts[:, 1])
    left = right = None
    dl = dr = None
    n_l = n_r = 0
    short = False
    length = 0.0
    band = (0.0, 0.0)
    for _ in range(opts.refits):
        ux, uy = float(u[0]), float(u[1])
        s = px * ux + py * uy - (apex[0] * ux + apex[1] * uy)
        t = py * ux - px * uy - (apex[1] * ux - apex[0] * uy)  # towards n_left = (-uy, ux)
        frame = np.array([[ux, -uy], [uy, ux]])  # columns: u, n_left
        lim_l = None if crotch_left is None else tuple((crotch_left - apex) @ frame)
        lim_r = None if crotch_right is None else tuple((crotch_right - apex) @ frame)
        if (lim_l is not None or lim_r is not None) and all_pts is not None:
            st = (all_pts - apex) @ frame
            own = np.ones(len(st), dtype=bool)
            if lim_l is not None:
                own &= st[:, 1] <= lim_l[1]
            if lim_r is not None:
                own &= st[:, 1] >= lim_r[1]
            length = float(st[own, 0].max()) if own.any() else 0.0
        else:
            length = float((hull @ u).max() - apex @ u)
        band = band_limits(length, opts.band, opts.mm_per_px, opts.band_fracs)
        idx, side, short = _select(s, t, band, (lim_l, lim_r), opts)  # type: ignore[arg-type]
        n_l = int((side == 0).sum())
        n_r = int(side.size - n_l)
        if n_l < opts.min_edge_points or n_r < opts.min_edge_points:
            left = right = None
            break
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
        n_in = np.bincount(side[inl], minlength=2)
        n_inward = np.bincount(side[inward], minlength=2)
        fits = []
        for k, n_pts in ((0, n_l), (1, n_r)):
            d = np.array([lines.dx[k], lines.dy[k]])
            d = d if d @ u >= 0 else -d  # away from the apex
            # contour points are centres of the plume's outermost pixels, on average
            # max(|dx|, |dy|) / 2 inside the true boundary: move the line out by that
            out = np.array([-d[1], d[0]]) if k == 0 else np.array([d[1], -d[0]])
            point = np.array([lines.cx[k], lines.cy[k]]) + 0.5 * max(abs(d[0]), abs(d[1])) * out
            fits.append(
                LineFit(point, d, float(lines.rms[k]), n_pts, int(n_in[k]), int(n_inward[k]))
            )
        left, right = fits
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
        if moved < 0.3 and turned < 5e-4:  # the band would move by a fraction of a pixel
            break
    return WedgeFit(apex, u, left, right, dl, dr, length, band, n_l, n_r, short)


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
