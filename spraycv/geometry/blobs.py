"""Blobs in a mask: components, their back profiles, notches, and where merged plumes split.

A wedge seen from any direction within (90 deg - half-angle) of its axis has a V-shaped
back profile (the nearest boundary point per lateral bin) whose minimum is the apex; plumes
merged on a boom give several V minima, with a crotch (local maximum) between neighbours.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import cv2
import numpy as np

from spraycv.geometry.tuning import TUNING
from spraycv.geometry.wedge import argmax_per_group, normal_left


@dataclass(frozen=True)
class Blob:
    """One connected component (its outer contour).

    pts: (N, 2) float64 contour points (x, y); usable: (N,) bool, False on the image border
    (the border cuts the plume there: not a spray boundary); hull: (K, 2) convex hull points
    (the extremes of any projection lie on it) and their indices into pts (K,); area in
    pixels; centroid (2,); fit_pts: (M, 2) the usable points, kept once (every fit uses them).
    """

    pts: np.ndarray
    usable: np.ndarray
    hull: np.ndarray
    hull_idx: np.ndarray
    area: float
    centroid: np.ndarray
    touches_border: bool
    fit_pts: np.ndarray


def clean_mask(mask01: np.ndarray, open_px: int, close_px: int) -> np.ndarray:
    """Opening (removes specks, hair-thin ligaments) then closing (joins near droplets)."""
    out = mask01
    if open_px > 1:
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (open_px, open_px))
        out = cv2.morphologyEx(out, cv2.MORPH_OPEN, k)
    if close_px > 1:
        # OpenCV's default border leaves the image edge alone in both dilation and erosion
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (close_px, close_px))
        out = cv2.morphologyEx(out, cv2.MORPH_CLOSE, k)
    return out


def find_blobs(mask01: np.ndarray, min_area: float, min_frac: float) -> list[Blob]:
    """Outer contours of the components of a cleaned (H, W) uint8 {0, 1} mask, debris dropped.

    findContours is an order of magnitude faster than labelling with statistics; the pixel
    area follows from the contour polygon by Pick's theorem (area + boundary / 2 + 1).
    """
    h, w = mask01.shape
    contours, _ = cv2.findContours(mask01, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return []
    areas = np.array([cv2.contourArea(c) + 0.5 * len(c) + 1.0 for c in contours])
    floor = max(min_area, min_frac * float(areas.max()))
    blobs = []
    for k in np.flatnonzero(areas >= floor):
        c = contours[k]
        mom = cv2.moments(c)
        pts = c.reshape(-1, 2).astype(np.float64)
        if mom["m00"] > 0:
            centroid = np.array([mom["m10"] / mom["m00"], mom["m01"] / mom["m00"]])
        else:
            centroid = pts.mean(axis=0)
        hull_idx = cv2.convexHull(c, returnPoints=False).ravel()
        on_border = (pts[:, 0] <= 0) | (pts[:, 1] <= 0) | (pts[:, 0] >= w - 1)
        on_border |= pts[:, 1] >= h - 1
        blobs.append(
            Blob(
                pts=pts,
                usable=~on_border,
                hull=pts[hull_idx],
                hull_idx=hull_idx,
                area=float(areas[k]),
                centroid=centroid,
                touches_border=bool(on_border.any()),
                fit_pts=pts[~on_border] if on_border.any() else pts,
            )
        )
    return blobs


def back_profile(
    pts: np.ndarray, usable: np.ndarray, u: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Back profile along axis u: per lateral bin, the boundary point nearest the back.

    Returns (t of the bins (B,), s_min (B,), point index (B,), -1 in gaps), bins ordered by
    t (towards n_left). Bins are wider than any contour step across the axis, so that the
    boundary crosses every bin; gaps (image border) are interpolated.
    """
    n = normal_left(u)
    idx = np.flatnonzero(usable)
    if idx.size == 0:  # the whole outline lies on the image border: profile it all the same
        idx = np.arange(len(pts))
    s = pts[idx] @ u
    t = pts[idx] @ n
    bins = np.floor(t / TUNING.profile_bin_px).astype(np.int64)
    b0 = int(bins.min())
    nb = int(bins.max()) - b0 + 1
    sel = argmax_per_group(bins, -s)  # per lateral bin, the point nearest the back
    prof = np.full(nb, np.nan)
    which = np.full(nb, -1, dtype=np.int64)
    prof[bins[sel] - b0] = s[sel]
    which[bins[sel] - b0] = idx[sel]
    gaps = np.isnan(prof)
    if gaps.any():
        xs = np.arange(nb)
        prof[gaps] = np.interp(xs[gaps], xs[~gaps], prof[~gaps])
    return (np.arange(nb) + b0 + 0.5) * TUNING.profile_bin_px, prof, which


def prominent_minima(
    prof: np.ndarray, min_depth: float, window: int = TUNING.minima_window
) -> list[int]:
    """Indices of the minima of a 1-D profile whose valley is min_depth deep on both sides.

    Depth on one side: the highest value between the minimum and the nearest lower point on
    that side (or the profile's end), minus the minimum (topographic prominence). Only the
    lowest point of its +-window neighbourhood is considered: the staircase of a rasterised
    boundary makes many one-bin dips that cannot be V tips.
    """
    nb = prof.size
    if nb == 0:
        return []
    pad = np.pad(prof, window, mode="edge")
    low = np.lib.stride_tricks.sliding_window_view(pad, 2 * window + 1).min(axis=1)
    first = np.r_[True, prof[1:] != prof[:-1]]  # a plateau counts once
    cands = np.flatnonzero((prof <= low) & first)
    out = []
    for i in cands:
        v = prof[i]
        lower_l = np.flatnonzero(prof[:i] < v)
        lo = lower_l[-1] if lower_l.size else 0
        lower_r = np.flatnonzero(prof[i + 1 :] < v)
        hi = i + 1 + lower_r[0] if lower_r.size else nb - 1
        rise_l = prof[lo : i + 1].max() - v
        rise_r = prof[i : hi + 1].max() - v
        if min(rise_l, rise_r) >= min_depth:
            out.append(int(i))
    return out


def split_merged(
    blob: Blob, u: np.ndarray, min_depth: float
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Apexes (V minima of the back profile) and crotches between them, ordered along -n_left.

    Returns (apexes, crotches): k points and k - 1 points (each (2,)), k >= 1.
    """
    _, prof, which = back_profile(blob.pts, blob.usable, u)
    mins = prominent_minima(prof, min_depth)
    if len(mins) <= 1:
        i = int(np.argmin(prof)) if not mins else mins[0]
        return [blob.pts[_nearest_valid(which, i)]], []
    apexes = [blob.pts[_nearest_valid(which, i)] for i in mins]
    crotches = []
    for a, b in itertools.pairwise(mins):
        j = a + int(np.argmax(prof[a : b + 1]))
        crotches.append(blob.pts[_nearest_valid(which, j)])
    # order along the boom: from n_left towards -n_left (image left to right for a downward axis)
    return apexes[::-1], crotches[::-1]


@dataclass(frozen=True)
class Notch:
    """A concavity of the outline: the hull edge a -> b bridging it, its deepest point (the
    crotch) and the edge's unit normal pointing into it (the sprays' direction on a boom)."""

    a: np.ndarray
    b: np.ndarray
    crotch: np.ndarray
    normal: np.ndarray
    depth: float

    def distance_to_edge(self, p: np.ndarray) -> float:
        """Distance (px) from point p to the bridging hull edge (segment a-b)."""
        e = self.b - self.a
        k = float(np.clip((p - self.a) @ e / max(float(e @ e), 1e-12), 0.0, 1.0))
        return float(np.hypot(*(self.a + k * e - p)))


def notches(blob: Blob, min_depth: float) -> list[Notch]:
    """Concavities of the outline at least min_depth deep, deepest first.

    Plumes merged on a boom leave a notch between neighbours; the hull edge bridging it runs
    along the boom, so its normal, pointing into the notch, is the sprays' direction.
    """
    if len(blob.hull_idx) < 3:
        return []
    contour = blob.pts.astype(np.int32).reshape(-1, 1, 2)
    try:
        defects = cv2.convexityDefects(contour, np.sort(blob.hull_idx).reshape(-1, 1))
    except cv2.error:  # self-touching outlines can upset OpenCV's monotonicity check
        return []
    if defects is None:
        return []
    d = defects.reshape(-1, 4)
    d = d[d[:, 3] / 256.0 >= min_depth]
    out = []
    for i0, i1, f, depth in d[np.argsort(-d[:, 3])]:
        a, b, c = blob.pts[i0], blob.pts[i1], blob.pts[f]
        e = b - a
        norm = float(np.hypot(*e))
        if norm < 1e-9:
            continue
        nrm = np.array([-e[1], e[0]]) / norm
        nrm = nrm if (c - a) @ nrm >= 0 else -nrm
        out.append(Notch(a, b, c, nrm, depth / 256.0))
    return out


def crotches_between(blob: Blob, u: np.ndarray, apexes: list[np.ndarray]) -> list[np.ndarray]:
    """Crotches (highest back-profile point) between consecutive given apexes (sorted by t)."""
    tb, prof, which = back_profile(blob.pts, blob.usable, u)
    n = normal_left(u)
    out = []
    for a, b in itertools.pairwise(apexes):
        ta, tbb = sorted((float(a @ n), float(b @ n)))
        sel = np.flatnonzero((tb >= ta) & (tb <= tbb))
        if sel.size == 0:
            out.append(0.5 * (a + b))
            continue
        j = int(sel[np.argmax(prof[sel])])
        out.append(blob.pts[_nearest_valid(which, j)])
    return out


def _nearest_valid(which: np.ndarray, i: int) -> int:
    if which[i] >= 0:
        return int(which[i])
    valid = np.flatnonzero(which >= 0)
    return int(which[valid[np.argmin(np.abs(valid - i))]])
