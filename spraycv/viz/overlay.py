"""Overlay pictures: image, mask outline, fitted boundary lines, apex, axis, band and angle."""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from spraycv.geometry import ConeMeasurement

OUTLINE = (255, 200, 0)  # BGR cyan-ish: mask outline
LINE = (0, 0, 255)  # red: fitted boundaries
AXIS = (0, 255, 255)  # yellow: axis and band ticks
APEX = (0, 255, 0)  # green: apex
# grey, with a hint of red unlike the text's shading: a reading that cannot be trusted
UNRELIABLE = (150, 150, 160)
TEXT_BG = (0, 0, 0)
NOTE_BG = (0, 0, 200)  # dark red: a reading's note (out of its spec) behind its angle


def _to_bgr(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return cv2.cvtColor(image.astype(np.uint8, copy=False), cv2.COLOR_GRAY2BGR)
    return np.array(image, dtype=np.uint8, order="C")  # one copy, contiguous: the canvas


def bgr_to_rgb_inplace(picture: np.ndarray, band_rows: int = 256) -> np.ndarray:
    """Swap an (H, W, 3) uint8 picture's channels in place and return it; a band of rows at
    a time, because cv2.cvtColor's own in-place mode copies the whole picture first."""
    for start in range(0, picture.shape[0], band_rows):
        band = picture[start : start + band_rows]
        cv2.cvtColor(band, cv2.COLOR_BGR2RGB, dst=band)
    return picture


def _pt(x: float, y: float) -> tuple[int, int]:
    return round(x), round(y)


Box = tuple[int, int, int, int]
"""A label's box on the canvas: x0, y0, x1, y1 (pixels, inclusive)."""

FONT = cv2.FONT_HERSHEY_SIMPLEX
LABEL_ALONG = (0.5, 0.65, 0.8, 0.95, 0.2, 1.15, 1.35, 1.6, 1.9)  # shares of the length where a
# reading's label may sit when the staggered place (0.35 or 0.6) is taken by a neighbour's
# label (a boom's unreliable readings carry long reasons, which ran into each other)
LABEL_GAP = 4  # px kept between labels


def _fitted_text(width: int, text: str, scale: float) -> tuple[float, int, int, int, int]:
    """(scale, thickness, text width, height, baseline) of a text shrunk to fit `width`."""
    (w, _), _ = cv2.getTextSize(text, FONT, scale, max(1, round(scale * 2)))
    scale *= min(1.0, (width - 6) / max(w, 1))
    thick = max(1, round(scale * 2))
    (w, h), base = cv2.getTextSize(text, FONT, scale, thick)
    return scale, thick, w, h, base


def label_box(
    shape: tuple[int, ...], text: str, anchor: tuple[int, int], scale: float, center: bool = False
) -> Box:
    """The box `draw_label` draws for `text` at `anchor` on a canvas of `shape` (H, W, ...)."""
    _, _, w, h, base = _fitted_text(shape[1], text, scale)
    x = anchor[0] - w // 2 if center else anchor[0]
    x = min(max(x, 2), shape[1] - w - 2)
    y = min(max(anchor[1], h + 2), shape[0] - base - 2)
    return x - 2, y - h - 2, x + w + 2, y + base + 1


def overlap(a: Box, b: Box, gap: int = 0) -> int:
    """Pixels two boxes share, each grown by `gap` px (0: apart)."""
    w = min(a[2], b[2]) - max(a[0], b[0]) + 1 + 2 * gap
    h = min(a[3], b[3]) - max(a[1], b[1]) + 1 + 2 * gap
    return max(w, 0) * max(h, 0)


def free_anchor(
    shape: tuple[int, ...],
    text: str,
    anchors: Sequence[tuple[int, int]],
    scale: float,
    taken: Sequence[Box],
) -> tuple[int, int]:
    """The first of `anchors` (at least one) where the centred label stays LABEL_GAP px clear
    of the `taken` boxes; where none does, the one that comes closest."""

    def clash(anchor: tuple[int, int]) -> int:
        box = label_box(shape, text, anchor, scale, center=True)
        return sum(overlap(box, other, LABEL_GAP) for other in taken)

    return min(anchors, key=clash)  # min keeps the first of equals: the preferred place


def draw_label(
    canvas: np.ndarray,
    text: str,
    anchor: tuple[int, int],
    scale: float,
    center: bool = False,
    background: tuple[int, int, int] = TEXT_BG,
) -> Box:
    """Text with a dark box behind it, kept inside the image (centred on `anchor` if asked);
    a text wider than the image is drawn smaller (an unreliable reading's reasons on a small
    frame were cut at its left edge). Returns the box."""
    box = label_box(canvas.shape, text, anchor, scale, center)
    scale, thick, _, _, base = _fitted_text(canvas.shape[1], text, scale)
    cv2.rectangle(canvas, box[:2], box[2:], background, -1)
    origin = (box[0] + 2, box[3] - base - 1)
    cv2.putText(canvas, text, origin, FONT, scale, (255, 255, 255), thick, cv2.LINE_AA)
    return box


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def draw_measurement(
    canvas: np.ndarray,
    m: ConeMeasurement,
    scale: float = 0.5,
    note: str = "",
    taken: list[Box] | None = None,
) -> None:
    """Draw one measurement in place on a (H, W, 3) uint8 BGR canvas.

    A reading marked unreliable is drawn grey and labelled with its reason instead of an
    angle; a line or axis that was not fitted (NaN) is left out. A `note` (a reading out of
    its spec: "OUT +6.2") follows the angle, on red. `taken`: the boxes of the labels drawn
    so far, which this reading's labels keep clear of where they can (LABEL_ALONG) and
    join.
    """
    if not m.ok or not _finite(*m.apex, *m.axis):
        return
    ax, ay = m.apex
    ux, uy = m.axis
    line_colour, apex_colour = (UNRELIABLE, UNRELIABLE) if m.unreliable else (LINE, APEX)
    length = m.length_px if math.isfinite(m.length_px) else 100.0
    thick = max(1, round(canvas.shape[0] / 400))
    for line, half in (
        (m.left_line, m.half_angle_left_deg),
        (m.right_line, m.half_angle_right_deg),
    ):
        dx, dy = line.direction
        if not _finite(dx, dy, half):
            continue
        reach = length / max(math.cos(math.radians(half)), 0.2)  # up to the spray's far end
        end = _pt(ax + dx * reach, ay + dy * reach)
        cv2.line(canvas, _pt(ax, ay), end, line_colour, thick, cv2.LINE_AA)
    axis_colour = UNRELIABLE if m.unreliable else AXIS
    cv2.line(canvas, _pt(ax, ay), _pt(ax + ux * length, ay + uy * length), axis_colour, 1)
    for s in m.band:  # band limits as short ticks across the axis
        if math.isfinite(s):
            cx, cy = ax + ux * s, ay + uy * s
            tick = (_pt(cx + uy * 6, cy - ux * 6), _pt(cx - uy * 6, cy + ux * 6))
            cv2.line(canvas, *tick, axis_colour, 1)
    cv2.circle(canvas, _pt(ax, ay), thick + 2, apex_colour, -1, cv2.LINE_AA)
    taken = [] if taken is None else taken
    text = f"unreliable: {m.unreliable}" if m.unreliable else f"{m.included_angle_deg:.1f}"
    text, background = (f"{text} {note}", NOTE_BG) if note else (text, TEXT_BG)
    staggered = 0.35 + 0.25 * (m.index % 2)  # neighbours on a boom alternate
    anchors = [_pt(ax + ux * length * f, ay + uy * length * f) for f in (staggered, *LABEL_ALONG)]
    anchor = free_anchor(canvas.shape, text, anchors, scale, taken)
    taken.append(draw_label(canvas, text, anchor, scale, center=True, background=background))
    number_at = _pt(ax - ux * 14 - 10, ay - uy * 14)
    taken.append(draw_label(canvas, f"#{m.index}", number_at, scale * 0.6))


def draw_overlay(
    image: np.ndarray,
    mask: np.ndarray | None,
    measurements: Sequence[ConeMeasurement],
    scale: float | None = None,
    notes: Sequence[str] | None = None,
) -> np.ndarray:
    """An annotated copy of an image.

    Args:
        image: (H, W, 3) uint8 BGR or (H, W) uint8.
        mask: (H, W) {0, 1} spray mask whose outline is drawn, or None.
        measurements: the plumes measured on that mask.
        notes: one per measurement, shown after its angle where not empty (out of spec).
    Returns:
        (H, W, 3) uint8 BGR picture.
    """
    canvas = _to_bgr(image)
    scale = scale if scale is not None else max(0.4, canvas.shape[0] / 1000)
    if mask is not None and mask.any():
        # findContours reads any non-zero uint8 as inside: no copy of a 20 MP mask
        binary = mask if mask.dtype == np.uint8 else (mask > 0).astype(np.uint8)
        contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cv2.drawContours(canvas, contours, -1, OUTLINE, 1, cv2.LINE_AA)
    header = "included angle (deg)" if any(m.ok for m in measurements) else ""
    # the header's place is kept from the labels, and it is drawn over the lines at the end
    taken = [label_box(canvas.shape, header, (4, 4), scale * 0.7)] if header else []
    for m, note in zip(measurements, notes or [""] * len(measurements), strict=True):
        draw_measurement(canvas, m, scale, note, taken)
    if header:
        draw_label(canvas, header, (4, 4), scale * 0.7)
    return canvas
