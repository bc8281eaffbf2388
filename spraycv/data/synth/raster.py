"""Exact polygon rasterisation at pixel centres.

A pixel belongs to a polygon when its centre `(x, y) = (col, row)` lies inside it (even-odd
rule, half-open so that shared edges are not counted twice). Unlike `cv2.fillPoly`, which
also paints pixels the outline merely touches, this keeps a mask edge within half a pixel
of the true boundary line, which the ground truth relies on.
"""

from __future__ import annotations

import numpy as np


def fill_polygon(vertices: np.ndarray, height: int, width: int) -> np.ndarray:
    """Rasterise one closed polygon (any size, may extend beyond the image).

    Args:
        vertices: (N, 2) float array of `(x, y)` vertices; the last connects to the first.
        height, width: image size.

    Returns:
        (height, width) bool array, True where the pixel centre is inside.
    """
    v = np.asarray(vertices, dtype=np.float64)
    x0, y0 = v[:, 0], v[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    ylo, yhi = np.minimum(y0, y1), np.maximum(y0, y1)
    # Rows r with ylo <= r < yhi (half-open), clipped to the image.
    r_lo = np.clip(np.ceil(ylo), 0, height).astype(np.int64)
    r_hi = np.clip(np.ceil(yhi), 0, height).astype(np.int64)
    counts = np.maximum(r_hi - r_lo, 0)
    total = int(counts.sum())
    out = np.zeros((height, width), dtype=bool)
    if total == 0:
        return out
    edge = np.repeat(np.arange(len(v)), counts)
    starts = np.cumsum(counts) - counts
    rows = r_lo[edge] + (np.arange(total) - starts[edge])
    slope = (x1 - x0)[edge] / (y1 - y0)[edge]  # counts > 0 implies y1 != y0
    xs = x0[edge] + (rows - y0[edge]) * slope
    order = np.lexsort((xs, rows))
    rows, xs = rows[order], xs[order]
    # Each row has an even number of crossings; consecutive pairs bound the inside spans.
    ra, xa, xb = rows[0::2], xs[0::2], xs[1::2]
    ca = np.clip(np.ceil(xa), 0, width).astype(np.int64)
    cb = np.clip(np.ceil(xb), 0, width).astype(np.int64)
    # One slice per span (a few per row): faster than a row-wise cumulative sum.
    for r, a, b in zip(ra.tolist(), ca.tolist(), cb.tolist(), strict=True):
        out[r, a:b] = True
    return out
