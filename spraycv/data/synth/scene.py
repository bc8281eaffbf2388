"""Hardware in front of the background: nozzle bodies, boom or feed pipe, fixtures.

Everything here lies upstream of the apexes (axial coordinate a < 0 in the boom frame),
so it never overlaps a spray envelope, which starts at a = 0. Parts are shaded as
cylinders with a specular stripe; edges are anti-aliased from exact signed distances.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from spraycv.data.synth.params import BodyParams, Color, NozzleParams, SceneParams


class _Frame:
    """Boom frame: a along the shared axis from the apex line, b along n_left."""

    def __init__(self, scene: SceneParams) -> None:
        nz = scene.nozzles[0]
        self.u = np.asarray(nz.envelope.axis, np.float32)
        self.n = np.array([-self.u[1], self.u[0]], np.float32)
        self.origin = np.asarray(nz.envelope.apex, np.float32)
        h, w = scene.height, scene.width
        dx = np.arange(w, dtype=np.float32)[None, :] - self.origin[0]
        dy = np.arange(h, dtype=np.float32)[:, None] - self.origin[1]
        self.a = dx * self.u[0] + dy * self.u[1]  # (h, w) by broadcasting
        self.b = dx * self.n[0] + dy * self.n[1]

    def b_of(self, nz: NozzleParams) -> float:
        p = np.asarray(nz.envelope.apex, np.float32) - self.origin
        return float(p @ self.n)


def _paint(
    img: np.ndarray,
    alpha: np.ndarray,
    s: np.ndarray,
    color: Color,
    spec: float,
    s0: float,
    dark: float,
) -> None:
    """Composite a cylinder-shaded part; s in [-1, 1] across it, `dark` scales (back-lit)."""
    m = alpha > 0  # shade only the part's own pixels: a diagonal pipe fills little of its box
    if not m.any():
        return
    sv = np.clip(s[m], -1.0, 1.0)
    diffuse = 0.35 + 0.65 * np.sqrt(1.0 - sv * sv) * (1.0 + 0.25 * sv * np.sign(s0))
    highlight = spec * np.exp(-(((sv - s0) / 0.14) ** 2))
    shade = (diffuse[:, None] * np.asarray(color, np.float32) + highlight[:, None]) * dark
    sub = img[m]
    img[m] = sub + alpha[m][:, None] * (shade - sub)


def _part(
    fr: _Frame, b0: float, a_lo: float, a_hi: float, w_lo: float, w_hi: float
) -> tuple[tuple[slice, slice], np.ndarray, np.ndarray]:
    """Trapezoid a in [a_lo, a_hi] with widths w_lo, w_hi at its ends.

    Returns:
        (rows, cols) slices of its bounding box, and there its alpha and across-coordinate.
    """
    h, w = fr.a.shape
    big = 4.0 * (h + w)  # clamp infinite parts (pipes) to beyond the image
    ends = ((max(a_lo, -big), min(w_lo, 2 * big)), (a_hi, min(w_hi, 2 * big)))
    corners = np.array(
        [fr.origin + a * fr.u + (b0 + sb * wd / 2) * fr.n for a, wd in ends for sb in (-1, 1)]
    )
    x0, y0 = np.clip(np.floor(corners.min(axis=0)) - 2, 0, (w, h)).astype(int)
    x1, y1 = np.clip(np.ceil(corners.max(axis=0)) + 3, 0, (w, h)).astype(int)
    sl = (slice(y0, y1), slice(x0, x1))
    a, b = fr.a[sl], fr.b[sl]
    wa = w_lo + (w_hi - w_lo) * np.clip((a - a_lo) / max(a_hi - a_lo, 1e-6), 0, 1)
    db = b - b0
    d = np.minimum(np.minimum(a - a_lo, a_hi - a), wa / 2 - np.abs(db))
    return sl, np.clip(d + 0.5, 0.0, 1.0), db / np.maximum(wa / 2, 1e-3)


def _body_parts(
    bd: BodyParams, pipe: bool, pipe_c: float, pr: float, top: float
) -> list[tuple[float, float, float, float, Color, float]]:
    """A nozzle body's parts, top down, as (axial start, end, width there, width at the
    end, colour, specular strength): the clamp around the pipe (with a pipe), the holder,
    the cap and the tip. Axial positions are along the spray axis from the orifice."""
    a1, a2 = -bd.tip_len, -bd.tip_len - bd.cap_len
    parts = [
        (pipe_c if pipe else -top, a2, bd.holder_w, bd.holder_w, bd.holder_color, 0.4),
        (a2, a1, bd.cap_w, bd.cap_w * 0.92, bd.cap_color, 0.5),
        (a1, 0.0, bd.tip_w1, bd.tip_w0, bd.tip_color, 0.8),
    ]
    if pipe:  # clamp around the pipe: bright stainless, a specular fixture
        clamp_w = bd.holder_w * 1.25
        parts.insert(
            0, (pipe_c - 1.2 * pr, pipe_c + 1.2 * pr, clamp_w, clamp_w, (0.7, 0.7, 0.7), 1.2)
        )
    return parts


def _cap_ribs(
    img: np.ndarray, fr: _Frame, bd: BodyParams, b0: float, rng: np.random.Generator
) -> None:
    """Dark grooves across a bayonet cap, painted into `img` in place."""
    a1, a2 = -bd.tip_len, -bd.tip_len - bd.cap_len
    sl, in_cap, _ = _part(fr, b0, a2, a1, bd.cap_w, bd.cap_w * 0.92)
    ribs = np.cos((fr.a[sl] - a2) / max(bd.cap_len, 1) * 2 * math.pi * int(rng.integers(2, 5)))
    img[sl] *= (1.0 - 0.25 * in_cap * (ribs > 0.7))[..., None]


def draw_hardware(img: np.ndarray, scene: SceneParams, rng: np.random.Generator) -> np.ndarray:
    """Draw pipe, bodies and fixtures onto `img` (H, W, 3) in place.

    Returns:
        (H, W) bool mask of the nozzle bodies and pipe (never part of a spray envelope).
    """
    fr = _Frame(scene)
    back = scene.lighting == "back"
    dark = float(rng.uniform(0.05, 0.25)) if back else 1.0
    s0 = float(rng.uniform(-0.5, 0.5))
    hw = np.zeros(fr.a.shape, np.float32)
    boom = scene.boom
    pr = float(boom["pipe_radius_px"])
    top = max(nz.body.tip_len + nz.body.cap_len + nz.body.holder_len for nz in scene.nozzles)
    pipe_c = -top - 0.5 * pr
    if boom["pipe"]:  # along the boom through the holders, across the whole image
        big = 4.0 * (fr.a.shape[0] + fr.a.shape[1])
        sl, alpha, _ = _part(fr, 0.0, pipe_c - pr, pipe_c + pr, 2 * big, 2 * big)
        s = (fr.a[sl] - pipe_c) / pr
        color = tuple(boom["pipe_color"])
        _paint(img[sl], alpha, s, color, float(rng.uniform(0.3, 1.2)), s0, dark)
        hw[sl] = np.maximum(hw[sl], alpha)
    for nz in scene.nozzles:
        bd, b0 = nz.body, fr.b_of(nz)
        if not boom["pipe"]:  # feed pipe or hose from the holder out of the image
            sl, alpha, s = _part(fr, b0, -1e5, -top + 1, 2 * pr, 2 * pr)
            _paint(
                img[sl], alpha, s, tuple(boom["pipe_color"]), float(rng.uniform(0.2, 1.0)), s0, dark
            )
            hw[sl] = np.maximum(hw[sl], alpha)
        for a_lo, a_hi, w_lo, w_hi, col, spec in _body_parts(
            bd, bool(boom["pipe"]), pipe_c, pr, top
        ):
            if a_hi <= a_lo:  # a body without this part (no cap on a bare stem)
                continue
            sl, alpha, s = _part(fr, b0, a_lo, a_hi, w_lo, w_hi)
            gloss = spec * bd.gloss * float(rng.uniform(0.5, 1.3))
            _paint(img[sl], alpha, s, col, gloss, s0, dark)
            hw[sl] = np.maximum(hw[sl], alpha)
        if bd.shape == "bayonet":
            _cap_ribs(img, fr, bd, b0, rng)
    if scene.fixtures:
        _fixtures(img, scene, fr, rng, dark, top)
    return hw > 0.5


def _fixtures(
    img: np.ndarray,
    scene: SceneParams,
    fr: _Frame,
    rng: np.random.Generator,
    dark: float,
    top: float,
) -> None:
    """Brackets beside a nozzle and specular glints near it (bright, not spray)."""
    nz = scene.nozzles[int(rng.integers(len(scene.nozzles)))]
    b0, bd = fr.b_of(nz), nz.body
    if rng.random() < 0.5:  # a bracket plate beside the body, upstream of the orifice
        side = 1.0 if rng.random() < 0.5 else -1.0
        width = bd.cap_w * float(rng.uniform(0.3, 0.8))
        bc = b0 + side * (bd.cap_w * float(rng.uniform(0.6, 1.2)) + width / 2)
        sl, alpha, s = _part(
            fr, bc, -top * float(rng.uniform(1.0, 2.0)), -bd.tip_len * 0.5, width, width
        )
        _paint(img[sl], alpha, s, (0.75, 0.75, 0.75), float(rng.uniform(0.8, 2.0)), 0.3, dark)
    # Glints: small saturating highlights on the hardware (tip, cap, holder or pipe).
    glint = np.zeros(fr.a.shape, np.float32)
    h, w = fr.a.shape
    pipe_c = -top - 0.5 * float(scene.boom["pipe_radius_px"])
    for _ in range(int(rng.integers(1, 5))):
        if scene.boom["pipe"] and rng.random() < 0.4:
            a = pipe_c + float(rng.uniform(-0.6, 0.6)) * float(scene.boom["pipe_radius_px"])
            b = b0 + float(rng.uniform(-2.0, 2.0)) * bd.cap_w
            along = fr.n
        else:
            a = -float(rng.uniform(0.15, 0.95)) * top
            b = b0 + float(rng.uniform(-0.35, 0.35)) * bd.cap_w
            along = fr.u
        p = fr.origin + a * fr.u + b * fr.n
        if not (0 <= p[0] < w and 0 <= p[1] < h):
            continue
        ang = math.degrees(math.atan2(float(along[1]), float(along[0])))
        ax = (int(rng.uniform(2, 6) * 16), int(rng.uniform(0.6, 1.5) * 16))
        cv2.ellipse(
            glint,
            (int(p[0] * 16), int(p[1] * 16)),
            ax,
            ang,
            0,
            360,
            float(rng.uniform(0.8, 2.5)),
            -1,
            cv2.LINE_AA,
            4,
        )
    img += cv2.GaussianBlur(glint, (0, 0), 0.8)[..., None] * (0.4 if dark < 1 else 1.0)
