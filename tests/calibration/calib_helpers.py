"""Draw calibration references into images at a known scale, with sub-pixel accuracy.

An upright board gets each pixel's exact black area; turned boards and markers are
rasterised on a grid `SUPER` times finer and averaged back down (edges to ~1/32 px).
Coordinates follow docs/cone_angle.md: pixel centres at integers, pixel k spans k +- 0.5.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

SUPER = 16
BLACK, WHITE = 20.0, 235.0
MAGENTA = np.array([255.0, 0.0, 255.0])  # BGR: a colour the renderer never produces


def _fine_grid(
    box: tuple[int, int, int, int], factor: int = SUPER
) -> tuple[np.ndarray, np.ndarray]:
    """Image (x, y) of the centres of the fine samples of box = (x0, y0, x1, y1), exclusive."""
    x0, y0, x1, y1 = box
    xs = x0 - 0.5 + (np.arange((x1 - x0) * factor) + 0.5) / factor
    ys = y0 - 0.5 + (np.arange((y1 - y0) * factor) + 0.5) / factor
    return np.meshgrid(xs, ys)


def _coarse(fine: np.ndarray, factor: int = SUPER) -> np.ndarray:
    h, w = fine.shape[0] // factor, fine.shape[1] // factor
    return fine.reshape(h, factor, w, factor).mean(axis=(1, 3))


def board_box(
    origin: tuple[float, float], square_px: float, squares: tuple[int, int]
) -> tuple[int, int, int, int]:
    """Pixel box (x0, y0, x1, y1) of a board with a one-square white margin."""
    ox, oy = origin
    cols, rows = squares
    return (
        math.floor(ox - square_px),
        math.floor(oy - square_px),
        math.ceil(ox + (cols + 1) * square_px) + 1,
        math.ceil(oy + (rows + 1) * square_px) + 1,
    )


def _overlap(first_px: int, n_px: int, edges: np.ndarray) -> np.ndarray:
    """(n_px, len(edges) - 1): the fraction of each pixel inside each interval of edges."""
    k = first_px + np.arange(n_px)[:, None]
    lo = np.maximum(k - 0.5, edges[None, :-1])
    hi = np.minimum(k + 0.5, edges[None, 1:])
    return np.clip(hi - lo, 0.0, None)


def _board_patch(
    box: tuple[int, int, int, int],
    origin: tuple[float, float],
    square_px: float,
    squares: tuple[int, int],
    angle_deg: float,
) -> np.ndarray:
    """Grey values of the board over box: exact pixel areas when upright, else sampled."""
    cols, rows = squares
    x0, y0, x1, y1 = box
    if angle_deg == 0:
        over_x = _overlap(x0, x1 - x0, origin[0] + square_px * np.arange(cols + 1))
        over_y = _overlap(y0, y1 - y0, origin[1] + square_px * np.arange(rows + 1))
        parity = (np.arange(rows)[:, None] + np.arange(cols)[None, :]) % 2 == 0
        black = over_y @ parity.astype(float) @ over_x.T
        return WHITE - (WHITE - BLACK) * black
    x, y = _fine_grid(box, SUPER // 2)  # turned edges are not phase-locked: 1/8 px will do
    c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    u = ((x - origin[0]) * c + (y - origin[1]) * s) / square_px  # board frame, in squares
    v = (-(x - origin[0]) * s + (y - origin[1]) * c) / square_px
    on_board = (u >= 0) & (u < cols) & (v >= 0) & (v < rows)
    black = on_board & ((np.floor(u) + np.floor(v)) % 2 == 0)
    return _coarse(np.where(black, BLACK, WHITE), SUPER // 2)


def draw_checkerboard(
    image: np.ndarray,
    origin: tuple[float, float],
    square_px: float,
    squares: tuple[int, int],
    angle_deg: float = 0.0,
) -> tuple[int, int, int, int]:
    """Paint a board of `squares` (cols, rows) with a white margin into `image` in place.

    origin: (x, y) of the board's outer top-left corner; angle_deg turns the board about
    it. Returns the painted pixel box (x0, y0, x1, y1), end exclusive.
    """
    cols, rows = squares
    c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    # The board with its one-square margin, turned: its corners bound the painted box.
    u = np.array([-1, cols + 1, cols + 1, -1]) * square_px
    v = np.array([-1, -1, rows + 1, rows + 1]) * square_px
    xs, ys = origin[0] + c * u - s * v, origin[1] + s * u + c * v
    box = (
        math.floor(xs.min()),
        math.floor(ys.min()),
        math.ceil(xs.max()) + 1,
        math.ceil(ys.max()) + 1,
    )
    patch = np.round(_board_patch(box, origin, square_px, squares, angle_deg))
    x0, y0, x1, y1 = box
    image[y0:y1, x0:x1] = patch[..., None] if image.ndim == 3 else patch
    return box


def draw_marker(image: np.ndarray, center: tuple[float, float], radius_px: float) -> None:
    """Blend a magenta disc centred at `center` (x, y) into a BGR image in place."""
    cx, cy = center
    box = (
        math.floor(cx - radius_px) - 1,
        math.floor(cy - radius_px) - 1,
        math.ceil(cx + radius_px) + 2,
        math.ceil(cy + radius_px) + 2,
    )
    x, y = _fine_grid(box)
    alpha = _coarse(((x - cx) ** 2 + (y - cy) ** 2 <= radius_px**2).astype(float))[..., None]
    x0, y0, x1, y1 = box
    sub = image[y0:y1, x0:x1].astype(float)
    image[y0:y1, x0:x1] = np.round((1 - alpha) * sub + alpha * MAGENTA).astype(np.uint8)


def find_markers(image: np.ndarray, n: int = 2) -> list[tuple[float, float]]:
    """Centres (x, y) of the `n` magenta markers, as a user would click them (sub-pixel)."""
    b, g, r = (image[..., k].astype(float) for k in range(3))
    # Magenta-ness: near 255 * alpha on a marker, near 0 on grey or any natural colour.
    score = np.clip(np.minimum(b, r) - g, 0, None)
    count, _, stats, _ = cv2.connectedComponentsWithStats((score > 128).astype(np.uint8))
    assert count - 1 >= n, f"found {count - 1} markers, expected {n}"
    order = np.argsort(stats[1:, cv2.CC_STAT_AREA])[::-1][:n] + 1
    centres = []
    for k in sorted(order, key=lambda k: stats[k, cv2.CC_STAT_LEFT]):
        x, y, w, h = stats[k, :4]
        win = np.s_[y - 2 : y + h + 2, x - 2 : x + w + 2]  # the blended rim counts too
        weight = score[win]
        ys, xs = np.mgrid[win]
        centres.append(
            (float((xs * weight).sum() / weight.sum()), float((ys * weight).sum() / weight.sum()))
        )
    return centres


def free_box(mask: np.ndarray, width: int, height: int, margin: int = 8) -> tuple[int, int] | None:
    """Top-left (x, y) of an image corner box of width x height clear of spray, or None."""
    h, w = mask.shape
    for x, y in (
        (margin, margin),
        (w - width - margin, margin),
        (margin, h - height - margin),
        (w - width - margin, h - height - margin),
    ):
        if not mask[
            max(y - margin, 0) : y + height + margin, max(x - margin, 0) : x + width + margin
        ].any():
            return x, y
    return None


def free_marker_pair(
    mask: np.ndarray,
    distance_px: float,
    radius_px: float,
    avoid: tuple[int, int, int, int],
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """Two marker centres `distance_px` apart, both clear of spray and of the `avoid` box.

    Centres get a fractional offset so that the test does not only see whole pixels.
    """
    h, w = mask.shape
    clear = 2 * int(radius_px) + 8  # spray-free square around each marker
    x0, y0, x1, y1 = avoid

    def ok(x: float, y: float) -> bool:
        if not (clear <= x < w - clear and clear <= y < h - clear):
            return False
        if x0 - clear <= x < x1 + clear and y0 - clear <= y < y1 + clear:
            return False
        xi, yi = int(x), int(y)
        return not mask[yi - clear : yi + clear, xi - clear : xi + clear].any()

    for y in np.arange(clear + 0.37, h - clear, 8.0):
        for x in np.arange(clear + 0.61, w - clear, 8.0):
            if not ok(x, y):
                continue
            for angle in np.radians(np.arange(0.0, 360.0, 7.5)):
                x2, y2 = x + distance_px * math.cos(angle), y + distance_px * math.sin(angle)
                if ok(x2, y2):
                    return (float(x), float(y)), (float(x2), float(y2))
    return None
