"""Robust straight-line fits to boundary points (Huber IRLS or RANSAC, then a trimmed refit).

Lines are fitted by total least squares (perpendicular residuals), so any orientation works.
Several lines (groups of points) are fitted at once from weighted moments (np.bincount):
a Python loop over a handful of small numpy calls would cost more than the arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from spraycv.geometry.tuning import TUNING


@dataclass(frozen=True)
class LineFit:
    """A fitted line: point (2,), unit direction (2,), inlier RMS, point and inlier counts."""

    point: np.ndarray
    direction: np.ndarray
    rms: float
    n_points: int
    n_inliers: int
    n_inward: int = 0  # points well inside the line (not droplets: curvature or notches)

    @property
    def inlier_frac(self) -> float:
        return self.n_inliers / self.n_points if self.n_points else 0.0

    @property
    def inward_frac(self) -> float:
        return self.n_inward / self.n_points if self.n_points else 0.0


@dataclass(frozen=True)
class GroupLines:
    """G lines at once: centroids cx, cy, unit directions dx, dy, RMS and counts, each (G,)."""

    cx: np.ndarray
    cy: np.ndarray
    dx: np.ndarray
    dy: np.ndarray
    rms: np.ndarray
    count: np.ndarray

    def residuals(self, x: np.ndarray, y: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Signed perpendicular distance (N,) of each point from its group's line."""
        return (x - self.cx[g]) * self.dy[g] - (y - self.cy[g]) * self.dx[g]


def group_lines(
    x: np.ndarray, y: np.ndarray, g: np.ndarray, ng: int, w: np.ndarray | None = None
) -> GroupLines:
    """Weighted total-least-squares line through each group of points.

    x, y: (N,) coordinates; g: (N,) group labels in [0, ng); w: (N,) weights or None.
    The direction is the principal axis of the group's 2x2 scatter matrix (closed form),
    the RMS the square root of its smaller eigenvalue over the total weight. The moments
    are bincounts: numpy calls, not arithmetic, cost here.
    """
    n = x.size
    x0, y0 = (float(x[0]), float(y[0])) if n else (0.0, 0.0)
    xc = x - x0  # centred, so that raw second moments lose no precision
    yc = y - y0
    count = np.bincount(g, minlength=ng)
    if w is None:
        sw = count.astype(np.float64)
        wx, wy = xc, yc
    else:
        sw = np.bincount(g, w, ng)
        wx, wy = w * xc, w * yc
    safe = np.maximum(sw, 1e-12)
    mx = np.bincount(g, wx, ng) / safe
    my = np.bincount(g, wy, ng) / safe
    swmx = sw * mx
    cxx = np.bincount(g, wx * xc, ng) - swmx * mx
    cyy = np.bincount(g, wy * yc, ng) - sw * my * my
    cxy = np.bincount(g, wx * yc, ng) - swmx * my
    diff = cxx - cyy
    theta = 0.5 * np.arctan2(2.0 * cxy, diff)
    half = 0.5 * diff
    lam = 0.5 * (cxx + cyy) - np.sqrt(half * half + cxy * cxy)
    rms = np.sqrt(np.maximum(lam, 0.0) / safe)
    return GroupLines(mx + x0, my + y0, np.cos(theta), np.sin(theta), rms, count)


def _ransac_group(x: np.ndarray, y: np.ndarray, iterations: int, seed: int) -> np.ndarray:
    """Inlier mask (N,) of the RANSAC line through one group of points."""
    n = x.size
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, iterations)
    j = rng.integers(0, n, iterations)
    dx, dy = x[j] - x[i], y[j] - y[i]
    norm = np.hypot(dx, dy)
    ok = norm > 1e-9
    if not ok.any():
        return np.ones(n, dtype=bool)
    i, dx, dy, norm = i[ok], dx[ok] / norm[ok], dy[ok] / norm[ok], norm[ok]
    # (iterations, N) residuals: fine for the few hundred points of a band
    r = np.abs((x[None, :] - x[i, None]) * dy[:, None] - (y[None, :] - y[i, None]) * dx[:, None])
    inl = r <= TUNING.ransac_inlier_px
    return inl[int(np.argmax(inl.sum(axis=1)))]


def _huber_lines(
    x: np.ndarray, y: np.ndarray, g: np.ndarray, ng: int, iterations: int, seed: int
) -> GroupLines:
    """Huber IRLS lines (a few reweighted TLS fits)."""
    lines = group_lines(x, y, g, ng)
    c = TUNING.huber_c_px
    for _ in range(TUNING.huber_iterations):
        r = np.abs(lines.residuals(x, y, g))
        if r.max(initial=0.0) <= c:
            break  # all weights are 1: the least-squares line is the Huber line
        lines = group_lines(x, y, g, ng, c / np.maximum(r, c))
    return lines


def _ransac_lines(
    x: np.ndarray, y: np.ndarray, g: np.ndarray, ng: int, iterations: int, seed: int
) -> GroupLines:
    """TLS lines through each group's RANSAC inliers (seeded per group: reproducible)."""
    w = np.zeros_like(x)
    for k in range(ng):
        idx = np.flatnonzero(g == k)
        if idx.size >= 2:
            w[idx] = _ransac_group(x[idx], y[idx], iterations, seed + k)
    return group_lines(x, y, g, ng, np.maximum(w, 1e-9))


def _lsq_lines(
    x: np.ndarray, y: np.ndarray, g: np.ndarray, ng: int, iterations: int, seed: int
) -> GroupLines:
    """Plain TLS lines (candidate scoring: the trimming that follows is robust enough)."""
    return group_lines(x, y, g, ng)


# the robust first stage of each method: (x, y, g, ng, ransac iterations, seed) -> lines
FIRST_STAGE: dict[str, Callable[..., GroupLines]] = {
    "huber": _huber_lines,
    "ransac": _ransac_lines,
    "lsq": _lsq_lines,
}


def _outward_sign(lines: GroupLines, outward: np.ndarray) -> np.ndarray:
    """Per group (G,), +1 or -1: the factor that makes a residual positive away from the
    spray, given approximate outward directions (G, 2)."""
    return (lines.dy * outward[:, 0] - lines.dx * outward[:, 1] >= 0) * 2.0 - 1.0


def robust_group_lines(
    x: np.ndarray,
    y: np.ndarray,
    g: np.ndarray,
    ng: int,
    method: str = "huber",
    outlier_px: float = 3.0,
    ransac_iterations: int = 100,
    seed: int = 0,
    outward: np.ndarray | None = None,
    rounds: int = TUNING.trim_rounds,
) -> tuple[GroupLines, np.ndarray, np.ndarray]:
    """Robust line per group: Huber IRLS or RANSAC, then TLS refits on the inliers.

    Points farther than outlier_px from the robust line are dropped from the refit and from
    the reported RMS (droplets or ligaments, not the boundary). With outward (ng, 2), an
    approximate outward direction per group (away from the spray), the trimming is one-sided
    where it matters: droplets and ligaments only ever add mask outside the boundary, so
    points more than TUNING.outward_keep_px outside the line are dropped too, and the line
    settles on the plume's solid edge. method "lsq" skips the robust stage (candidate
    scoring).

    Returns (lines, inlier mask (N,), inward mask (N,): points more than outlier_px inside
    their line, which droplets cannot explain: curvature, notches, a wrong wedge).
    """
    if method not in FIRST_STAGE:
        raise ValueError(f"unknown robust fit method {method!r}: use 'huber' or 'ransac'")
    lines = FIRST_STAGE[method](x, y, g, ng, ransac_iterations, seed)
    inl = np.ones(x.size, dtype=bool)
    r = lines.residuals(x, y, g)
    for k in range(rounds if outward is not None else 1):
        if outward is not None:
            r = r * _outward_sign(lines, outward)[g]
            keep = (r >= -outlier_px) & (r <= TUNING.outward_keep_px)
        else:
            keep = np.abs(r) <= outlier_px
        # a group that would lose its points keeps them (its RMS then shows the problem)
        keep |= (np.bincount(g[keep], minlength=ng) < 2)[g]
        if keep.all() and inl.all():
            break
        if k > 0 and np.array_equal(keep, inl):
            # the lines were fitted to exactly these points: every further round would
            # refit them to the same lines and keep the same points again
            r = r * _outward_sign(lines, outward)[g]  # as the refit's residuals (signs +-1)
            break
        inl = keep
        lines = group_lines(x[inl], y[inl], g[inl], ng)
        r = lines.residuals(x, y, g)
    if outward is None:
        return lines, inl, np.zeros(x.size, dtype=bool)
    # when the loop stopped early, r is oriented already and this product undoes that; it
    # is kept as it was (a refactor keeps every figure): docs/cone_angle.md, "Where each
    # number lives"
    return lines, inl, r * _outward_sign(lines, outward)[g] < -outlier_px


def fit_line(
    pts: np.ndarray,
    method: str = "huber",
    outlier_px: float = 3.0,
    ransac_iterations: int = 100,
    seed: int = 0,
) -> LineFit:
    """Robust line through pts (N >= 2, 2) (see robust_group_lines)."""
    pts = np.asarray(pts, dtype=np.float64)
    n = len(pts)
    if n < 2:
        raise ValueError(f"a line fit needs at least 2 points; got {n}")
    g = np.zeros(n, dtype=np.int64)
    lines, inl, _ = robust_group_lines(
        pts[:, 0], pts[:, 1], g, 1, method, outlier_px, ransac_iterations, seed
    )
    return LineFit(
        point=np.array([lines.cx[0], lines.cy[0]]),
        direction=np.array([lines.dx[0], lines.dy[0]]),
        rms=float(lines.rms[0]),
        n_points=n,
        n_inliers=int(inl.sum()),
    )


def intersect(p1: np.ndarray, d1: np.ndarray, p2: np.ndarray, d2: np.ndarray) -> np.ndarray | None:
    """Intersection (2,) of two lines given as point + direction, None when (near) parallel."""
    den = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(den) < 1e-9:
        return None
    w = p2 - p1
    a = (w[0] * d2[1] - w[1] * d2[0]) / den
    return p1 + a * d1
