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


def _label(
    canvas: np.ndarray,
    text: str,
    anchor: tuple[int, int],
    scale: float,
    center: bool = False,
    background: tuple[int, int, int] = TEXT_BG,
) -> None:
    """Text with a dark box behind it, kept inside the image (centred on `anchor` if asked);
    a text wider than the image is drawn smaller (an unreliable reading's reasons on a small
    frame were cut at its left edge)."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    (w, _), _ = cv2.getTextSize(text, font, scale, max(1, round(scale * 2)))
    scale *= min(1.0, (canvas.shape[1] - 6) / max(w, 1))
    thick = max(1, round(scale * 2))
    (w, h), base = cv2.getTextSize(text, font, scale, thick)
    x = anchor[0] - w // 2 if center else anchor[0]
    x = min(max(x, 2), canvas.shape[1] - w - 2)
    y = min(max(anchor[1], h + 2), canvas.shape[0] - base - 2)
    cv2.rectangle(canvas, (x - 2, y - h - 2), (x + w + 2, y + base + 1), background, -1)
    cv2.putText(canvas, text, (x, y), font, scale, (255, 255, 255), thick, cv2.LINE_AA)


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def draw_measurement(
    canvas: np.ndarray, m: ConeMeasurement, scale: float = 0.5, note: str = ""
) -> None:
    """Draw one measurement in place on a (H, W, 3) uint8 BGR canvas.

    A reading marked unreliable is drawn grey and labelled with its reason instead of an
    angle; a line or axis that was not fitted (NaN) is left out. A `note` (a reading out of
    its spec: "OUT +6.2") follows the angle, on red.
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
    along = 0.35 + 0.25 * (m.index % 2)  # stagger neighbours' labels on a boom
    anchor = _pt(ax + ux * length * along, ay + uy * length * along)
    text = f"unreliable: {m.unreliable}" if m.unreliable else f"{m.included_angle_deg:.1f}"
    text, background = (f"{text} {note}", NOTE_BG) if note else (text, TEXT_BG)
    _label(canvas, text, anchor, scale, center=True, background=background)
    _label(canvas, f"#{m.index}", _pt(ax - ux * 14 - 10, ay - uy * 14), scale * 0.6)


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
    for m, note in zip(measurements, notes or [""] * len(measurements), strict=True):
        draw_measurement(canvas, m, scale, note)
    if any(m.ok for m in measurements):
        _label(canvas, "included angle (deg)", (4, 4), scale * 0.7)
    return canvas
