"""A spray mask redrawn from its readings: each trusted plume as the wedge between its fitted
sides, out to the segmented front along each ray from its apex.

A network's mask is least precise far from the orifice, where the plume is faint; its sides
there wander by a few degrees around the straight sides that the readings fit near the
orifice (docs/experiments.md, row 97). Within each trusted plume's sector (its two sides
widened by a margin), the plume's connected component becomes the wedge between the sides,
reaching as far along each ray as the component does; other components, everything outside
those sectors, and every plume whose reading is not trusted keep the segmented pixels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from spraycv.config.geometry import MaskShapeConfig
from spraycv.geometry.types import ConeMeasurement
from spraycv.geometry.wedge import normal_left

_REACH = 1.4  # a sector ends this many spray lengths from its apex
_SHIFT = 4  # polygons are filled with 4 fractional bits of their vertices
_SUBPIXEL = 1 << _SHIFT


def _angle_from(axis: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """(N,) signed angles (deg) of (N, 2) vectors from a unit (2,) axis, positive towards
    n_left (the geometry's convention, docs/cone_angle.md)."""
    return np.degrees(np.arctan2(vectors @ normal_left(axis), vectors @ axis))


def rays(axis: np.ndarray, angles_deg: np.ndarray) -> np.ndarray:
    """(N, 2) unit rays at the given angles (deg) from a unit (2,) axis, as `_angle_from`."""
    a = np.radians(angles_deg)[:, None]
    return np.cos(a) * axis + np.sin(a) * normal_left(axis)


def _front_by_ray(
    bins: np.ndarray, radius: np.ndarray, n_bins: int, window: int, edge_frac: float
) -> np.ndarray | None:
    """(n_bins,) how far a plume's outline points (their ray bins and radii) reach along
    each ray bin, median-smoothed over `window` bins; a bin they never reach takes the
    median of the others, and the outer `edge_frac` of the bins on each side reach at least
    as far as the bin inside them (MaskShapeConfig.edge_frac). None when no bin is reached."""
    front = np.full(n_bins, -1.0)
    np.maximum.at(front, bins, radius)
    reached = front >= 0
    if not reached.any():
        return None
    front[~reached] = np.median(front[reached])
    half = window // 2
    padded = np.pad(front, half, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1)
    # an odd window's median is its middle value (np.median's, on these finite radii)
    front = np.partition(windows, half, axis=1)[:, half]
    edge = min(round(edge_frac * n_bins), (n_bins - 1) // 2)
    if edge > 0:
        front[:edge] = np.maximum(front[:edge], front[edge])
        front[-edge:] = np.maximum(front[-edge:], front[-edge - 1])
    return front


def _own_component(labels: np.ndarray, apex: np.ndarray, axis: np.ndarray, length: float) -> int:
    """The connected component a plume's axis runs through most (0: none)."""
    points = np.rint(apex + np.outer(np.linspace(0.1, 0.6, 16) * length, axis)).astype(int)
    h, w = labels.shape
    keep = (points[:, 0] >= 0) & (points[:, 0] < w) & (points[:, 1] >= 0) & (points[:, 1] < h)
    met = labels[points[keep, 1], points[keep, 0]]
    met = met[met > 0]
    return int(np.bincount(met).argmax()) if met.size else 0


def polygon_box(polygon: np.ndarray, shape: tuple[int, ...]) -> tuple[slice, slice] | None:
    """(rows, cols) slices of the pixels an (N, 2) polygon can touch, clipped to the frame."""
    x0, y0 = np.maximum(np.floor(polygon.min(axis=0)).astype(int) - 2, 0)
    x1, y1 = np.ceil(polygon.max(axis=0)).astype(int) + 3
    x1, y1 = min(x1, shape[1]), min(y1, shape[0])
    return (slice(y0, y1), slice(x0, x1)) if x1 > x0 and y1 > y0 else None


def _filled(polygon: np.ndarray, box: tuple[slice, slice], rim_px: int = 0) -> np.ndarray:
    """The box's uint8 pixels that the polygon's fill (and an outline of rim_px) touch."""
    rows, cols = box
    canvas = np.zeros((rows.stop - rows.start, cols.stop - cols.start), np.uint8)
    local = [np.round((polygon - [cols.start, rows.start]) * _SUBPIXEL).astype(np.int32)]
    if rim_px:
        cv2.polylines(canvas, local, True, 1, rim_px, cv2.LINE_8, _SHIFT)
    else:
        cv2.fillPoly(canvas, local, 1, cv2.LINE_8, _SHIFT)
    return canvas


def _draw_wedge(
    canvas: np.ndarray, apex: np.ndarray, axis: np.ndarray, edges: np.ndarray, front: np.ndarray
) -> None:
    """Set the pixels whose centres lie in a wedge: between the ray angles edges[0] and
    edges[-1] (deg from the axis), within front[k] of the apex between edges[k] and
    edges[k + 1]. The polygon fill takes its interior; the pixels along its outline, which
    the fill takes whole, are kept only where their centres are inside."""
    outline = np.concatenate(
        [rays(axis, edges[:-1]) * front[:, None], rays(axis, edges[1:]) * front[:, None]],
        axis=1,
    ).reshape(-1, 2)
    polygon = np.vstack([apex[None], apex + outline])
    box = polygon_box(polygon, canvas.shape)
    if box is None:
        return
    filled = _filled(polygon, box)
    ys, xs = np.nonzero(_filled(polygon, box, rim_px=3) & filled)
    offsets = np.stack([xs + box[1].start, ys + box[0].start], -1) - apex
    angle = _angle_from(axis, offsets)
    k = np.clip(np.searchsorted(edges, angle, side="right") - 1, 0, len(front) - 1)
    inside = (angle >= edges[0]) & (angle <= edges[-1])
    inside &= np.hypot(offsets[:, 0], offsets[:, 1]) <= front[k]
    filled[ys[~inside], xs[~inside]] = 0
    canvas[box] |= filled


def _sides(m: ConeMeasurement) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    """(apex, axis, lo, hi): a trusted reading's apex, axis and its sides' angles (deg) from
    the axis, lo < hi; None for a reading that is not trusted or lacks a side."""
    if not m.reliable or not math.isfinite(m.length_px) or m.length_px <= 0:
        return None
    apex, axis = np.asarray(m.apex, float), np.asarray(m.axis, float)
    sides = np.asarray([m.left_line.direction, m.right_line.direction], float)
    if not (np.isfinite(apex).all() and np.isfinite(axis).all() and np.isfinite(sides).all()):
        return None
    lo, hi = sorted(_angle_from(axis, sides).tolist())
    return apex, axis, lo, hi


class MaskOutline:
    """A mask's connected components and the points of their outlines, labelled: the
    farthest pixel of a component along a ray is on its outline (or at a sector's reach)."""

    def __init__(self, mask: np.ndarray) -> None:
        _, self.labels = cv2.connectedComponents(mask, connectivity=8)
        outlines, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        self.points = np.concatenate(outlines).reshape(-1, 2) if outlines else np.zeros((0, 2), int)
        self.point_labels = self.labels[self.points[:, 1], self.points[:, 0]]


def plume_front(
    outline: MaskOutline, m: ConeMeasurement, config: MaskShapeConfig
) -> tuple[int, np.ndarray, np.ndarray] | None:
    """(component, edges (B + 1,), front (B,)) of a trusted reading: its component's label,
    the ray bins' angles (deg from the axis, between its sides) and how far the component
    reaches in each bin, median-smoothed. None for a reading not trusted or off the mask."""
    sides = _sides(m)
    if sides is None:
        return None
    apex, axis, lo, hi = sides
    own = _own_component(outline.labels, apex, axis, m.length_px)
    if own == 0:
        return None
    offsets = outline.points[outline.point_labels == own] - apex
    radius = np.minimum(np.hypot(offsets[:, 0], offsets[:, 1]), _REACH * m.length_px)
    angle = _angle_from(axis, offsets)
    inside = (angle >= lo) & (angle <= hi)
    n_bins = max(math.ceil((hi - lo) / config.ray_bin_deg), 1)
    bins = np.minimum(((angle[inside] - lo) / config.ray_bin_deg).astype(int), n_bins - 1)
    front = _front_by_ray(bins, radius[inside], n_bins, config.front_window, config.edge_frac)
    if front is None:
        return None
    edges = np.minimum(lo + config.ray_bin_deg * np.arange(n_bins + 1), hi)
    return own, edges, front


def shaped_mask(
    mask: np.ndarray, measurements: Sequence[ConeMeasurement], config: MaskShapeConfig
) -> np.ndarray:
    """(H, W) uint8 {0, 1}: `mask` (H, W) with each trusted plume redrawn as its wedge."""
    if not config.enabled:
        return mask
    segmented = mask.astype(np.uint8)
    outline = MaskOutline(segmented)
    wedges = np.zeros(mask.shape, np.uint8)
    trimmed = np.zeros(mask.shape, bool)
    for m in measurements:
        found = plume_front(outline, m, config)
        if found is None:
            continue
        own, edges, front = found
        apex, axis = np.asarray(m.apex, float), np.asarray(m.axis, float)
        _draw_wedge(wedges, apex, axis, edges, front)
        margin = config.margin_deg
        arc = np.linspace(edges[0] - margin, edges[-1] + margin, 33)
        sector = np.vstack([apex[None], apex + _REACH * m.length_px * rays(axis, arc)])
        box = polygon_box(sector, mask.shape)
        if box is not None:  # other components stay as they are
            trimmed[box] |= _filled(sector, box).astype(bool) & (outline.labels[box] == own)
    return ((segmented.astype(bool) & ~trimmed) | wedges.astype(bool)).astype(np.uint8)
