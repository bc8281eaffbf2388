"""A second look at sprays that fill a small part of the frame.

The network was trained on frames whose sprays are 16-95 % of the shorter side long. In a
photo taken from further away (a boom from the field edge, a phone held back) the first pass
sees a plume a few dozen network pixels long, misses some nozzles and reads the rest
coarsely. Where everything the first pass found lies in a square smaller than a given
share of the frame's shorter side, that square (with a margin for the nozzle bodies) is
read again at the network's input size and its mask and apexes replace the first pass's
there. Pure numpy functions; `Predictor.second_look` applies them.
"""

from __future__ import annotations

import numpy as np

Box = tuple[int, int, int, int]  # y0, y1, x0, x1 (ends exclusive)

MARGIN = 0.35  # of the spray's larger extent, on each side: the bodies above, the fronts
MAX_ZOOM = 4.0  # the square is never smaller than this share of the shorter side: 1 / 4


def zoom_box(mask: np.ndarray, below: float) -> Box | None:
    """The square to read again, or None when the spray is large enough or absent.

    Args:
        mask: (H, W) uint8 {0, 1}, the first pass's mask.
        below: zoom only when the square (spray extent plus margins) is smaller than this
            share of min(H, W).
    Returns:
        (y0, y1, x0, x1) of a square inside the image, centred on the spray's bounding box
        where the image allows, of side at least min(H, W) / MAX_ZOOM.
    """
    ys = np.flatnonzero(mask.any(axis=1))  # the rows and columns holding spray: the
    if not len(ys):  # extremes of np.nonzero's, without listing every pixel
        return None
    xs = np.flatnonzero(mask.any(axis=0))
    height, width = mask.shape
    extent = max(ys[-1] - ys[0], xs[-1] - xs[0]) + 1
    short = min(height, width)
    side = round(max(extent * (1 + 2 * MARGIN), short / MAX_ZOOM))
    if side >= below * short:
        return None
    cy, cx = (ys[0] + ys[-1] + 1) / 2, (xs[0] + xs[-1] + 1) / 2
    y0 = int(np.clip(round(cy - side / 2), 0, height - side))
    x0 = int(np.clip(round(cx - side / 2), 0, width - side))
    return y0, y0 + side, x0, x0 + side


def paste_mask(mask: np.ndarray, box: Box, crop_mask: np.ndarray) -> np.ndarray:
    """`mask` (H, W) with the box replaced by `crop_mask` (box height, box width)."""
    y0, y1, x0, x1 = box
    out = mask.copy()
    out[y0:y1, x0:x1] = crop_mask
    return out


def paste_apexes(
    points: np.ndarray,
    heat: np.ndarray | None,
    box: Box,
    crop_points: np.ndarray,
    crop_heat: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The first pass's apexes (K, 2) of (x, y) outside the box, then the second pass's
    (M, 2) moved into image pixels; their heat (K,) and (M,) alike (None: not known)."""
    y0, y1, x0, x1 = box
    points = np.asarray(points, np.float64).reshape(-1, 2)
    outside = ~(
        (points[:, 0] >= x0) & (points[:, 0] < x1) & (points[:, 1] >= y0) & (points[:, 1] < y1)
    )
    moved = np.asarray(crop_points, np.float64).reshape(-1, 2) + np.array([x0, y0])
    merged = np.concatenate([points[outside], moved])
    if heat is None or crop_heat is None:
        return merged, None
    return merged, np.concatenate([np.asarray(heat)[outside], np.asarray(crop_heat)])


# Tiles: a boom of small sprays spans the frame, so no one square zooms it (experiments row
# 152); the frame is then read again in overlapping tiles, each at the network's input size
TILE_SHARE = 0.6  # a tile's side, of the frame's shorter side: 1.7 x the first pass's scale
TILE_STEP = 0.8  # neighbouring tiles overlap by a fifth of a side, so a nozzle near a seam
# lies whole in one of them
PEAK_MERGE = 0.02  # apex peaks of two tiles nearer than this share of the shorter side are one


def _starts(length: int, side: int) -> list[int]:
    """Start offsets of tiles of `side` pixels covering `length` with TILE_STEP overlap."""
    if side >= length:
        return [0]
    n = int(np.ceil((length - side) / (TILE_STEP * side))) + 1
    return [int(v) for v in np.round(np.linspace(0, length - side, n))]


def tile_boxes(shape: tuple[int, int], share: float = TILE_SHARE) -> list[Box]:
    """Overlapping squares of side `share` x min(H, W) that cover an (H, W) frame: 2 x 2 on a
    square frame, more columns on a wide one."""
    height, width = shape
    side = max(1, round(share * min(height, width)))
    return [(y, y + side, x, x + side)
            for y in _starts(height, side) for x in _starts(width, side)]  # fmt: skip


def merge_peaks(
    points: np.ndarray, heat: np.ndarray | None, radius: float
) -> tuple[np.ndarray, np.ndarray | None]:
    """Apex peaks (K, 2) of overlapping tiles with those within `radius` of a hotter one
    dropped (the first kept where the heat is unknown); their heat (K,) alike."""
    points = np.asarray(points, np.float64).reshape(-1, 2)
    order = np.arange(len(points)) if heat is None else np.argsort(-np.asarray(heat), kind="stable")
    kept: list[int] = []
    for i in order:
        if all(np.hypot(*(points[i] - points[k])) >= radius for k in kept):
            kept.append(int(i))
    kept.sort()
    return points[kept], None if heat is None else np.asarray(heat)[kept]


def wants_tiles(
    shape: tuple[int, int],
    trusted_apexes: np.ndarray,
    trusted_lengths: np.ndarray,
    untrusted: int,
    peaks: np.ndarray | None,
    short: float,
) -> bool:
    """Whether a frame's first reading leaves small sprays unexplained (experiments row 152).

    Args:
        shape: the frame's (H, W).
        trusted_apexes: (T, 2) apexes of its trusted readings; trusted_lengths: (T,) their
            lengths in pixels.
        untrusted: how many of its readings are not trusted.
        peaks: (K, 2) the apex head's peaks, or None.
        short: every trusted reading must be shorter than this share of min(H, W).
    Returns:
        True where the trusted readings are all short (or there are none) and an untrusted
        reading or a peak that no trusted reading's apex explains is left.
    """
    if np.any(np.asarray(trusted_lengths) >= short * min(shape)):
        return False
    peaks = np.zeros((0, 2)) if peaks is None else np.asarray(peaks, np.float64).reshape(-1, 2)
    apexes = np.asarray(trusted_apexes, np.float64).reshape(-1, 2)
    reach = 0.1 * np.asarray(trusted_lengths, np.float64) + 10.0  # as recovery's EXPLAINED_*
    dist = np.hypot(*(peaks[:, None, :] - apexes[None, :, :]).transpose(2, 0, 1))
    lone = ~(dist < reach[None, :]).any(axis=1) if len(apexes) else np.ones(len(peaks), bool)
    return untrusted > 0 or bool(lone.any())
