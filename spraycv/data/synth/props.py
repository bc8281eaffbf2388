"""Hard negatives: lit metal, bright clutter, wet surfaces and reflections; dust on the lens.

Props are flat parts (polygons in a local frame: the mount at the origin, the length along
+x) shaded as brushed metal, tubes, matte card or lamps. They are drawn as bright as the
spray or brighter (dark silhouettes when the scene is back-lit) and never overlap a
spraying nozzle's envelope (plus a margin): the truth mask stays the envelope, and the
spray's boundary stays visible. Brackets and clutter go behind the hardware, so a nozzle
body in front of a bracket hides it, as it would.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from spraycv.data.synth.noise import big_blur, smooth_noise_1d
from spraycv.data.synth.params import Color, pick, ur
from spraycv.data.synth.style_context import StyleContext

Contours = list[np.ndarray]  # (N, 2) local (along, across) polygons; several: even-odd holes
Shape = Callable[[np.random.Generator, float], Contours]
Shade = Callable[[np.random.Generator, np.ndarray, np.ndarray], np.ndarray]

_TRIES = 16  # placements tried per prop before giving up on it
# Bare and plated metal, and a few painted parts (BGR).
_METALS: tuple[Color, ...] = (
    (1.0, 1.0, 1.0),
    (1.0, 0.97, 0.93),
    (0.92, 0.96, 1.0),
    (0.55, 0.78, 0.95),
    (0.85, 0.85, 0.8),
)


# --- Shapes (size = the part's longest side, px) ---------------------------------------


def _holes(rng: np.random.Generator, length: float, half: float) -> Contours:
    """Bolt holes or slots along a part's centre line (even-odd: they cut through)."""
    r = min(0.45 * half, 0.06 * length)
    if r < 1.5:
        return []
    xs = np.linspace(0.15, 0.85, int(rng.integers(1, 4))) * length
    return [_ellipse(r, r, float(x)) for x in xs] if rng.random() < 0.7 else []


def _plate(rng: np.random.Generator, size: float) -> Contours:
    """Flat bar or mounting plate, often with bolt holes."""
    half = 0.5 * size * ur(rng, (0.12, 0.45))
    outline = np.array([[0, -half], [size, -half], [size, half], [0, half]], np.float32)
    return [outline, *_holes(rng, size, half)]


def _gusset(rng: np.random.Generator, size: float) -> Contours:
    """Triangular stiffener widening away from its mount: the most plume-like metal."""
    spread = size * math.tan(math.radians(ur(rng, (8.0, 40.0))))
    root = 0.5 * size * ur(rng, (0.02, 0.12))
    return [np.array([[0, -root], [size, -spread], [size, spread], [0, root]], np.float32)]


def _l_bracket(rng: np.random.Generator, size: float) -> Contours:
    """Angle bracket: two arms at a right angle, bolt holes in the long one."""
    arm, wd = size * ur(rng, (0.35, 0.9)), size * ur(rng, (0.08, 0.22))
    pts = [[0, 0], [size, 0], [size, wd], [wd, wd], [wd, arm], [0, arm]]
    shift = np.array([0, arm / 2], np.float32)
    holes = [h - shift + np.array([0, wd / 2], np.float32) for h in _holes(rng, size, wd / 2)]
    return [np.array(pts, np.float32) - shift, *holes]


def _ellipse(a: float, b: float, cx: float, n: int = 40) -> np.ndarray:
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.stack([cx + a * np.cos(t), b * np.sin(t)], axis=1).astype(np.float32)


def _clamp(rng: np.random.Generator, size: float) -> Contours:
    """Pipe clamp or U-bolt seen at an angle: an elliptic ring."""
    a, aspect, wall = size / 2, ur(rng, (0.35, 1.0)), ur(rng, (0.55, 0.8))
    return [_ellipse(a, a * aspect, a), _ellipse(a * wall, a * aspect * wall, a)]


def _rod(rng: np.random.Generator, size: float) -> Contours:
    """Tube, rail or cable run: long and thin."""
    half = 0.5 * size * ur(rng, (0.02, 0.08))
    return [np.array([[0, -half], [size, -half], [size, half], [0, half]], np.float32)]


def _blob(rng: np.random.Generator, size: float) -> Contours:
    """Irregular patch (foam, gravel, a splash on the floor)."""
    t = np.linspace(0.0, 1.0, 48, endpoint=False)
    r = 0.5 * size * (1.0 + 0.3 * smooth_noise_1d(rng, 6, t))
    ang, aspect = 2 * math.pi * t, ur(rng, (0.4, 1.0))
    return [np.stack([size / 2 + r * np.cos(ang), aspect * r * np.sin(ang)], 1).astype(np.float32)]


def _disc(rng: np.random.Generator, size: float) -> Contours:
    """Lamp, lens flare or a bright round fitting."""
    return [_ellipse(size / 2, size / 2 * ur(rng, (0.6, 1.0)), size / 2)]


# --- Shading: relative brightness at (s along in [0, 1], t across in [-1, 1]) ------------


def _brushed_metal(rng: np.random.Generator, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Sheet metal: light falling off across it, brushing streaks along it, a specular band
    (it may saturate, as lit steel does)."""
    grad = 0.6 + ur(rng, (-0.35, 0.35)) * (2 * s - 1) + ur(rng, (-0.2, 0.2)) * t
    brush = 1.0 + 0.2 * smooth_noise_1d(rng, int(rng.integers(20, 80)), np.clip((t + 1) / 2, 0, 1))
    t0, s0, wd = ur(rng, (-0.6, 0.6)), ur(rng, (0.0, 1.0)), ur(rng, (0.08, 0.4))
    band = np.exp(-(((t - t0) / wd) ** 2) - ((s - s0) / ur(rng, (0.2, 1.5))) ** 2)
    return np.maximum(grad, 0.1) * brush + ur(rng, (0.3, 1.2)) * band


def _tube(rng: np.random.Generator, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Cylinder lit from one side: round shading and a sharp highlight."""
    tc = np.clip(t, -1.0, 1.0)
    t0, spec = ur(rng, (-0.6, 0.6)), ur(rng, (0.4, 1.5))
    return 0.3 + 0.6 * np.sqrt(1.0 - tc * tc) + spec * np.exp(-(((tc - t0) / 0.12) ** 2))


def _matte(rng: np.random.Generator, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Card, label or painted panel: flat, a soft gradient, faint texture."""
    return 0.8 + ur(rng, (-0.2, 0.2)) * (2 * s - 1) + 0.05 * np.sin(9 * s + 5 * t)


def _lamp(rng: np.random.Generator, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Lamp or flare: saturating centre."""
    r2 = (2 * s - 1) ** 2 + t * t
    return ur(rng, (1.5, 3.5)) * (0.6 + 0.4 * np.exp(-2 * r2))


@dataclass(frozen=True)
class PropKind:
    shape: Shape
    shade: Shade
    size_scale: float = 1.0  # times the drawn size (rods are long, lamps small)
    halo: float = 0.0  # glow around it, relative to its brightness
    rim: float = 0.8  # most light its bevelled edges catch (0: a soft-edged surface)


def _panel(rng: np.random.Generator, size: float) -> Contours:
    """Wide flat surface: a tray, a wet floor or a wall panel."""
    half = 0.5 * size * ur(rng, (0.3, 0.9))
    return [np.array([[0, -half], [size, -half], [size, half], [0, half]], np.float32)]


def _wet_sheen(rng: np.random.Generator, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Wet surface: darker than dry, with a broad glossy highlight."""
    t0, s0 = ur(rng, (-0.5, 0.5)), ur(rng, (0.2, 0.8))
    return 0.2 + ur(rng, (0.5, 1.2)) * np.exp(-(((t - t0) / 0.35) ** 2 + ((s - s0) / 0.3) ** 2))


BRACKETS: dict[str, PropKind] = {
    "plate": PropKind(_plate, _brushed_metal),
    "gusset": PropKind(_gusset, _brushed_metal),
    "l_bracket": PropKind(_l_bracket, _brushed_metal),
    "clamp": PropKind(_clamp, _tube, 0.5),
}
CLUTTER: dict[str, PropKind] = {
    "tube": PropKind(_rod, _tube, 2.0),
    "card": PropKind(_plate, _matte, rim=0.2),
    "lamp": PropKind(_disc, _lamp, 0.3, halo=0.35, rim=0.0),
    "patch": PropKind(_blob, _matte, rim=0.0),
    "gusset": PropKind(_gusset, _brushed_metal),
}
WET_SURFACE = PropKind(_panel, _wet_sheen, rim=0.0)
_BRACKET_P = {"plate": 1.0, "gusset": 1.0, "l_bracket": 1.0, "clamp": 0.6}
_CLUTTER_P = {"tube": 1.0, "card": 0.7, "lamp": 0.6, "patch": 0.7, "gusset": 0.5}


# --- Placement --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pose:
    origin: tuple[float, float]  # image (x, y) of the local origin
    angle: float  # image direction of local +x, radians


def _to_image(contours: Contours, pose: Pose) -> Contours:
    c, s = math.cos(pose.angle), math.sin(pose.angle)
    rot = np.array([[c, s], [-s, c]], np.float32)  # rows: local x, y -> image
    return [c_ @ rot + np.asarray(pose.origin, np.float32) for c_ in contours]


def _keep_out(ctx: StyleContext) -> np.ndarray:
    """The spraying envelopes grown by a margin: props stay out, the spray edge stays clear."""
    m = max(3, round(0.012 * min(ctx.shape)))
    grown = cv2.dilate(ctx.spraying.astype(np.uint8), np.ones((2 * m + 1, 2 * m + 1), np.uint8))
    return grown > 0


def _fit(ctx: StyleContext, contours: Contours, keep_out: np.ndarray) -> np.ndarray | None:
    """(H, W) uint8 coverage of the part, or None if it meets `keep_out` or is mostly
    outside the image."""
    cover = np.zeros(ctx.shape, np.uint8)
    pts = [np.round(c * 16).astype(np.int32) for c in contours]
    cv2.fillPoly(cover, pts, 255, cv2.LINE_AA, 4)
    area = abs(cv2.contourArea(contours[0])) - sum(abs(cv2.contourArea(c)) for c in contours[1:])
    if np.count_nonzero(cover > 127) < 0.3 * max(area, 1.0) or cover[keep_out].any():
        return None
    return cover


def _beside_nozzle(ctx: StyleContext) -> Pose:
    """Mounted next to a nozzle body, pointing down its axis, out to a side, or anywhere."""
    rng, nz = ctx.rng, ctx.scene.nozzles[int(ctx.rng.integers(len(ctx.scene.nozzles)))]
    bd, u = nz.body, np.asarray(nz.envelope.axis)
    n = np.array([-u[1], u[0]])
    top = bd.tip_len + bd.cap_len + bd.holder_len
    side = 1.0 if rng.random() < 0.5 else -1.0
    p = np.asarray(nz.envelope.apex) + ur(rng, (-1.6, 0.2)) * top * u
    p = p + side * bd.cap_w * ur(rng, (0.55, 2.5)) * n
    turns = (0.0, side * math.pi / 2, side * ur(rng, (0.3, 1.2)), ur(rng, (-math.pi, math.pi)))
    turn = turns[int(rng.choice(4, p=[0.35, 0.25, 0.25, 0.15]))]
    return Pose((float(p[0]), float(p[1])), math.atan2(u[1], u[0]) + turn)


def _anywhere(ctx: StyleContext) -> Pose:
    """Anywhere in the frame; rails and cards mostly square to the world."""
    h, w = ctx.shape
    rng = ctx.rng
    world = math.radians(ctx.scene.camera_roll_deg + float(rng.choice([0.0, 90.0, 180.0, 270.0])))
    angle = world if rng.random() < 0.6 else ur(rng, (-math.pi, math.pi))
    return Pose((ur(rng, (0.0, w)), ur(rng, (0.0, h))), angle)


def _place(
    ctx: StyleContext,
    kind: PropKind,
    size: float,
    anchor: Callable[[StyleContext], Pose],
    keep_out: np.ndarray,
) -> tuple[np.ndarray, Pose, Contours] | None:
    """Coverage, pose and local contours of a part that fits, or None after `_TRIES`.

    Each failed try shrinks the part a little: large parts where there is room, smaller
    ones beside wide sprays.
    """
    for i in range(_TRIES):
        local = kind.shape(ctx.rng, size * 0.9**i)
        pose = anchor(ctx)
        cover = _fit(ctx, _to_image(local, pose), keep_out)
        if cover is not None:
            return cover, pose, local
    return None


# --- Painting ---------------------------------------------------------------------------


def _level(ctx: StyleContext) -> float:
    """Prop brightness: as bright as the spray or more; a dark silhouette when back-lit."""
    sc = ctx.scene
    if sc.lighting == "back":
        return sc.bg_level * ur(ctx.rng, (0.03, 0.3))
    return sc.spray_gain * ur(ctx.rng, ctx.cfg.prop_level_range)


def _paint_part(
    ctx: StyleContext,
    img: np.ndarray,
    placed: tuple[np.ndarray, Pose, Contours],
    kind: PropKind,
    color: Color,
) -> np.ndarray:
    """Composite a placed part onto `img` in place; returns its (H, W) float coverage."""
    cover, pose, local = placed
    h, w = ctx.shape
    blur = ur(ctx.rng, (0.0, 1.8)) * ctx.px  # parts sit at other depths than the nozzle
    pad = math.ceil(3 * blur) + 1
    rows, cols = np.nonzero(cover)
    y0, y1 = max(rows.min() - pad, 0), min(rows.max() + 1 + pad, h)
    x0, x1 = max(cols.min() - pad, 0), min(cols.max() + 1 + pad, w)
    a = cover[y0:y1, x0:x1].astype(np.float32) / 255.0
    # Bevelled edges catch the light: a thin bright rim.
    rim = a - cv2.erode(a, np.ones((3, 3), np.uint8), iterations=max(1, round(ctx.px)))
    x = np.arange(x0, x1, dtype=np.float32)[None, :] - pose.origin[0]
    y = np.arange(y0, y1, dtype=np.float32)[:, None] - pose.origin[1]
    c, s = math.cos(pose.angle), math.sin(pose.angle)
    lo, hi = np.concatenate(local).min(axis=0), np.concatenate(local).max(axis=0)
    along = ((x * c + y * s) - lo[0]) / max(hi[0] - lo[0], 1e-3)
    across = 2.0 * ((y * c - x * s) - lo[1]) / max(hi[1] - lo[1], 1e-3) - 1.0
    level = _level(ctx)
    shade = kind.shade(ctx.rng, along, across) + ur(ctx.rng, (0.0, kind.rim)) * rim
    shade = (shade * level).astype(np.float32)
    if blur > 0.3:
        a = cv2.GaussianBlur(a, (0, 0), blur)
    sub = img[y0:y1, x0:x1]
    sub += a[..., None] * (shade[..., None] * np.asarray(color, np.float32) - sub)
    full = np.zeros(ctx.shape, np.float32)
    full[y0:y1, x0:x1] = a
    if kind.halo > 0:  # lamps glow into the air around them
        glow = big_blur(full, 0.25 * max(hi[0] - lo[0], 2.0))
        img += (kind.halo * level * glow)[..., None] * np.asarray(color, np.float32)
    return full


def _paint_parts(
    ctx: StyleContext,
    img: np.ndarray,
    kinds: dict[str, PropKind],
    weights: dict[str, float],
    count: tuple[int, int],
    size_frac: tuple[float, float],
    anchor: Callable[[StyleContext], Pose],
) -> int:
    """Draw up to `count` parts of the given kinds; returns how many fitted."""
    keep_out, n_done = _keep_out(ctx), 0
    for _ in range(int(ctx.rng.integers(count[0], count[1] + 1))):
        kind = kinds[pick(ctx.rng, weights)]
        size = ur(ctx.rng, size_frac) * min(ctx.shape) * kind.size_scale
        placed = _place(ctx, kind, size, anchor, keep_out)
        if placed is not None:
            color = _METALS[int(ctx.rng.integers(len(_METALS)))]
            _paint_part(ctx, img, placed, kind, color)
            n_done += 1
    return n_done


def paint_brackets(ctx: StyleContext, img: np.ndarray) -> None:
    """Lit brackets, gussets, angle brackets and clamps beside the nozzle bodies."""
    cfg = ctx.cfg
    n = _paint_parts(
        ctx, img, BRACKETS, _BRACKET_P, cfg.n_brackets_range, cfg.bracket_size_frac_range,
        _beside_nozzle,
    )  # fmt: skip
    ctx.params["brackets"] = n


def paint_lit_clutter(ctx: StyleContext, img: np.ndarray) -> None:
    """Lit tubes, cards, lamps, patches and metal anywhere in the frame."""
    cfg = ctx.cfg
    n = _paint_parts(
        ctx, img, CLUTTER, _CLUTTER_P, cfg.n_clutter_range, cfg.clutter_size_frac_range, _anywhere
    )
    ctx.params["clutter"] = n


def _beads_and_drips(ctx: StyleContext, region: np.ndarray) -> np.ndarray:
    """Water beaded on a surface and drips running down it (droplet-like, not spray)."""
    rng, px = ctx.rng, ctx.px
    layer = np.zeros(ctx.shape, np.float32)
    rows, cols = np.nonzero(region > 0.5)
    for i in rng.integers(0, rows.size, int(rng.integers(20, 250))):
        r = int(ur(rng, (0.6, 2.8)) * px * 16)
        cv2.circle(layer, (int(cols[i]) * 16, int(rows[i]) * 16), r, ur(rng, (0.4, 1.5)), -1,
                   cv2.LINE_AA, 4)  # fmt: skip
    gx, gy = ctx.scene.gravity_dir
    for i in rng.integers(0, rows.size, int(rng.integers(0, 10))):
        length = ur(rng, (0.03, 0.2)) * min(ctx.shape)
        p0 = (int(cols[i]) * 16, int(rows[i]) * 16)
        p1 = (int((cols[i] + gx * length) * 16), int((rows[i] + gy * length) * 16))
        cv2.line(layer, p0, p1, ur(rng, (0.4, 1.2)), max(1, round(1.5 * px)), cv2.LINE_AA, 4)
    return cv2.GaussianBlur(layer, (0, 0), 0.6 * px) * region


def paint_wet_surfaces(ctx: StyleContext, img: np.ndarray) -> None:
    """A wet tray, floor or panel: glossy sheen, beaded water and drips."""
    size = ur(ctx.rng, (0.25, 0.6)) * min(ctx.shape)
    placed = _place(ctx, WET_SURFACE, size, _anywhere, _keep_out(ctx))
    ctx.params["wet_surface"] = placed is not None
    if placed is None:
        return
    region = _paint_part(ctx, img, placed, WET_SURFACE, (1.0, 1.0, 1.0))
    img += (_beads_and_drips(ctx, region) * _level(ctx))[..., None]


def _mirror(dens: np.ndarray, d: np.ndarray, c: float) -> np.ndarray:
    """`dens` reflected in the line {p : p . d = c} (d a unit vector)."""
    h, w = dens.shape
    dx, dy = float(d[0]), float(d[1])
    m = np.array(
        [[1 - 2 * dx * dx, -2 * dx * dy, 2 * c * dx], [-2 * dx * dy, 1 - 2 * dy * dy, 2 * c * dy]],
        np.float32,
    )  # an involution: the same matrix maps either way
    return cv2.warpAffine(dens, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=0.0)


def paint_reflection(ctx: StyleContext, img: np.ndarray, dens: np.ndarray) -> None:
    """The spray mirrored, blurred and faded in a wet floor or a glossy side wall.

    The mirror line lies beyond the spraying envelopes (plus a margin), so the reflection
    never overlaps them; it is drawn without the nozzle body, as only the lit spray shows.
    """
    sc, rng = ctx.scene, ctx.rng
    if sc.lighting == "back" or not ctx.spraying.any():
        return
    u = np.asarray(sc.nozzles[0].envelope.axis, np.float64)
    options = (u, np.array([-u[1], u[0]]), np.array([u[1], -u[0]]))
    k = int(rng.integers(3))  # a floor below the spray, or a wall on either side
    d = options[k]
    rows, cols = np.nonzero(ctx.spraying)
    h, w = ctx.shape
    c = float((cols * d[0] + rows * d[1]).max()) + max(3.0, 0.012 * min(h, w))
    c += ur(rng, (0.0, 0.08)) * min(h, w)
    x = np.arange(w, dtype=np.float32)[None, :]
    y = np.arange(h, dtype=np.float32)[:, None]
    dist = x * np.float32(d[0]) + y * np.float32(d[1]) - np.float32(c)
    fade = np.exp(-np.maximum(dist, 0.0) / (ur(rng, (0.1, 0.5)) * min(h, w))) * (dist > 0)
    refl = big_blur(_mirror(dens, d, c), ur(rng, (1.5, 6.0)) * ctx.px) * fade
    strength = ur(rng, ctx.cfg.reflection_strength_range)
    light = (1.0 - np.exp(-1.8 * refl)) * np.float32(sc.spray_gain * strength)
    surface = 1.0 + ur(rng, (-0.3, 0.3)) * (dist > 0)  # the surface's own tone shows its edge
    img *= surface[..., None].astype(np.float32)
    img += light[..., None] * np.asarray(sc.spray_color, np.float32)
    ctx.params["reflection"] = ("floor", "wall", "wall")[k]


def paint_lens_dust(ctx: StyleContext, img: np.ndarray) -> None:
    """Dust and smudges on the lens: soft dark spots, and bright ones where stray light
    catches them; discs or, far out of focus, rings."""
    rng, px = ctx.rng, ctx.px
    h, w = ctx.shape
    dark, bright = np.zeros((h, w), np.float32), np.zeros((h, w), np.float32)
    n = int(rng.integers(ctx.cfg.n_dust_range[0], ctx.cfg.n_dust_range[1] + 1))
    for _ in range(n):
        layer = dark if rng.random() < 0.7 else bright
        r = ur(rng, (1.5, 25.0)) * px
        thick = max(1, round(0.35 * r)) if rng.random() < 0.3 else -1
        centre = (int(ur(rng, (0, w)) * 16), int(ur(rng, (0, h)) * 16))
        cv2.circle(layer, centre, int(r * 16), ur(rng, (0.05, 0.4)), thick, cv2.LINE_AA, 4)
    dark = cv2.GaussianBlur(dark, (0, 0), ur(rng, (1.0, 5.0)) * px)
    bright = cv2.GaussianBlur(bright, (0, 0), ur(rng, (1.0, 5.0)) * px)
    img *= (1.0 - np.clip(dark, 0.0, 0.8))[..., None]
    img += (bright * max(float(img.mean()), 0.1) * 1.5)[..., None]
    ctx.params["dust_spots"] = n
