"""Backgrounds: dark lab (front-lit), bright diffuser panel (back-lit), outdoor field, and a
sunlit crop canopy or bare soil seen from above (a boom's camera looking down).

All return (H, W, 3) float32 BGR in about [0, 1]. World-aligned structures (horizon,
frame rails) follow the camera roll, so a rotated camera rotates them too.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from spraycv.data.synth.noise import big_blur, smooth_noise_2d, smoothstep
from spraycv.data.synth.params import SceneParams


def _coords(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Centred pixel coordinates as a (1, w) row and an (h, 1) column (broadcast them)."""
    x = np.arange(w, dtype=np.float32)[None, :] - (w - 1) / 2
    y = np.arange(h, dtype=np.float32)[:, None] - (h - 1) / 2
    return x, y


def _gradient(rng: np.random.Generator, h: int, w: int, amp: float) -> np.ndarray:
    """Linear ramp in a random direction, 1 +- amp at the image corners, (h, w)."""
    x, y = _coords(h, w)
    t = rng.uniform(0, 2 * math.pi)
    k = amp / (0.5 * math.hypot(h, w))
    return 1.0 + (x * np.float32(k * math.cos(t)) + y * np.float32(k * math.sin(t)))


def _rods(img: np.ndarray, rng: np.random.Generator, angles: list[float], level: float) -> None:
    """Straight rods/rails across the image (out-of-focus lab clutter), in place."""
    h, w = img.shape[:2]
    x, y = _coords(h, w)
    alpha = np.zeros((h, w), np.float32)
    shade = np.zeros((h, w), np.float32)
    for angle in angles:
        t = math.radians(angle)
        off = rng.uniform(-0.5, 0.5) * min(h, w)
        d = x * np.float32(math.cos(t)) + (y * np.float32(math.sin(t)) - np.float32(off))
        half = rng.uniform(2, 14) * min(h, w) / 512
        m = np.abs(d) < half + 0.5  # shade only the rod's own pixels
        dm = d[m]
        a = np.clip(half + 0.5 - np.abs(dm), 0.0, 1.0)
        s = np.clip(dm / half, -1.0, 1.0)
        lv = level * rng.uniform(1.2, 3.0) + 0.03
        sh = lv * (0.6 + 0.4 * np.sqrt(1 - s * s)) + rng.uniform(0, 0.15) * np.exp(
            -(((s - 0.3) / 0.2) ** 2)
        )
        shade[m] += a * (sh - shade[m])
        alpha[m] = np.maximum(alpha[m], a)
    blur = rng.uniform(0.5, 4.0)
    alpha = cv2.GaussianBlur(alpha, (0, 0), blur)
    shade = cv2.GaussianBlur(shade, (0, 0), blur)
    tint = np.array(rng.uniform(0.8, 1.0, 3), np.float32)
    img += alpha[..., None] * (shade[..., None] * tint - img)


def lab_background(rng: np.random.Generator, scene: SceneParams) -> np.ndarray:
    """Dark cloth or wall, gradients, blotches, grain, out-of-focus rails and lamps."""
    h, w = scene.height, scene.width
    base = scene.bg_level * _gradient(rng, h, w, rng.uniform(0.0, 0.8))
    base = base * (1.0 + 0.35 * smooth_noise_2d(rng, h, w, rng.uniform(2, 5)))
    base += scene.bg_level * 0.12 * smooth_noise_2d(rng, h, w, w / rng.uniform(3, 6), octaves=2)
    img = np.clip(base, 0, None)[..., None] * np.array(scene.bg_color, np.float32)
    img = np.ascontiguousarray(img, dtype=np.float32)
    if not scene.clutter:
        return img
    angles = [
        scene.camera_roll_deg + float(rng.choice([0.0, 90.0])) + rng.normal(0, 3)
        for _ in range(int(rng.integers(1, 4)))
    ]
    if angles:
        _rods(img, rng, angles, scene.bg_level)
    if rng.random() < 0.5:  # out-of-focus lamp or window reflection
        x, y = _coords(h, w)
        cx, cy = rng.uniform(-0.5, 0.5, 2) * (w, h)
        sig = rng.uniform(0.03, 0.15) * min(h, w)
        spot = np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * sig * sig)) * rng.uniform(0.1, 0.6)
        img += spot[..., None].astype(np.float32)
    if rng.random() < 0.25:  # tiled wall: faint grout grid
        x, y = _coords(h, w)
        t = math.radians(scene.camera_roll_deg)
        pitch = rng.uniform(0.08, 0.25) * min(h, w)
        xr, yr = x * math.cos(t) - y * math.sin(t), x * math.sin(t) + y * math.cos(t)
        grid = np.minimum(np.abs(((xr / pitch) % 1) - 0.5), np.abs(((yr / pitch) % 1) - 0.5))
        img *= (1.0 - 0.3 * smoothstep(0.47, 0.5, grid.astype(np.float32)))[..., None]
    return img


def panel_background(rng: np.random.Generator, scene: SceneParams) -> np.ndarray:
    """Back-light diffuser: bright, hot spot, vignette of the panel, dust, dark rods."""
    h, w = scene.height, scene.width
    x, y = _coords(h, w)
    cx, cy = rng.uniform(-0.3, 0.3, 2) * (w, h)
    r2 = ((x - cx) ** 2 + (y - cy) ** 2) / (0.25 * (h * h + w * w))
    base = (
        scene.bg_level
        * (1.0 - rng.uniform(0.0, 0.45) * r2)
        * _gradient(rng, h, w, rng.uniform(0, 0.2))
    )
    base *= 1.0 + 0.03 * smooth_noise_2d(rng, h, w, rng.uniform(3, 8))
    img = np.ascontiguousarray(base[..., None] * np.array(scene.bg_color, np.float32), np.float32)
    # Dust and stains on the diffuser: dark soft dots (hard negatives for droplets).
    dust = np.zeros((h, w), np.float32)
    n = int(rng.integers(0, 40))
    xs, ys = rng.uniform(0, w, n), rng.uniform(0, h, n)
    for xi, yi in zip(xs, ys, strict=True):
        rad = rng.uniform(0.5, 3.0) * min(h, w) / 512
        cv2.circle(
            dust,
            (int(xi * 16), int(yi * 16)),
            int(rad * 16),
            float(rng.uniform(0.1, 0.6)),
            -1,
            cv2.LINE_AA,
            4,
        )
    dust = cv2.GaussianBlur(dust, (0, 0), rng.uniform(0.6, 2.0))
    img *= (1.0 - dust)[..., None]
    n_rods = int(rng.integers(1, 3)) if scene.clutter else 0
    if n_rods:  # dark silhouettes of stands between panel and camera
        angles = [scene.camera_roll_deg + float(rng.choice([0.0, 90.0])) for _ in range(n_rods)]
        _rods(img, rng, angles, float(rng.uniform(0.01, 0.05)))
    return img


def field_background(rng: np.random.Generator, scene: SceneParams) -> np.ndarray:
    """Outdoor: sky above a horizon, crop canopy or soil below, out of focus."""
    h, w = scene.height, scene.width
    x, y = _coords(h, w)
    gx, gy = scene.gravity_dir
    down = (x * gx + y * gy) / min(h, w)  # world-down coordinate, 0 at the centre
    horizon = rng.uniform(-0.7, 0.0)
    sky_top = np.array(
        [rng.uniform(0.7, 0.9), rng.uniform(0.55, 0.75), rng.uniform(0.4, 0.6)], np.float32
    )
    sky_low = np.array([0.85, 0.83, 0.8], np.float32)
    k = np.clip(down - horizon + 1.0, 0.0, 1.0)[..., None]
    sky = (sky_top * (1 - k) + sky_low * k) * scene.bg_level / 0.7
    crop = rng.random() < 0.6
    c1 = np.array((0.12, 0.42, 0.28) if crop else (0.22, 0.32, 0.42), np.float32)
    c2 = np.array((0.05, 0.18, 0.12) if crop else (0.12, 0.18, 0.25), np.float32)
    # Foliage or clods: fine fractal texture, denser and smaller towards the horizon.
    tex = smooth_noise_2d(rng, h, w, w / rng.uniform(6, 16), octaves=4)
    tex += 0.4 * smooth_noise_2d(rng, h, w, rng.uniform(2, 4))
    tex += 0.3 * (rng.random((h, w), dtype=np.float32) - 0.5)  # grit, softened by the blur
    m = np.clip(0.5 + 0.45 * tex, 0.0, 1.0)[..., None]
    ground = (c1 * m + c2 * (1 - m)) * (0.4 + 0.8 * scene.bg_level)
    a = smoothstep(horizon - 0.01, horizon + 0.01, down)[..., None]
    img = sky * (1 - a) + ground * a
    return big_blur(np.ascontiguousarray(img, np.float32), rng.uniform(0.8, 3.0))


def _crop_rows(rng: np.random.Generator, h: int, w: int, roll_deg: float) -> np.ndarray:
    """(h, w) cover in [0, 1] of crop rows seen from above: parallel bands of leaves whose
    width and gaps wander, broken into leafy clumps; 0 on bare soil."""
    x, y = _coords(h, w)
    t = math.radians(roll_deg + rng.uniform(-90.0, 90.0))
    across = (x * math.cos(t) + y * math.sin(t)) / min(h, w)
    pitch = rng.uniform(0.12, 0.45)
    wander = 0.08 * smooth_noise_2d(rng, h, w, rng.uniform(2, 5))
    phase = np.abs(((across / pitch + wander + rng.uniform(0, 1)) % 1.0) - 0.5) * 2  # 0: row
    fill = rng.uniform(0.35, 0.9)  # share of the pitch the canopy covers
    leaves = smooth_noise_2d(rng, h, w, w / rng.uniform(6, 14) / 4, octaves=3)
    return smoothstep(fill + 0.15, fill - 0.15, phase + 0.35 * leaves)


def canopy_background(rng: np.random.Generator, scene: SceneParams) -> np.ndarray:
    """Sunlit ground seen from above and in focus: crop rows (or a closed canopy) over soil,
    or bare soil and stubble; leaf-sized texture with sunlit tops and shaded gaps, which
    a spray in front of it veils only partly."""
    h, w = scene.height, scene.width
    crop = _crop_rows(rng, h, w, scene.camera_roll_deg) if rng.random() < 0.75 else None
    # BGR: green leaves; brown soil, red above green above blue
    leaf = np.array([rng.uniform(0.05, 0.2), rng.uniform(0.35, 0.6), rng.uniform(0.15, 0.4)])
    red = rng.uniform(0.25, 0.5)
    soil = np.array([red * rng.uniform(0.3, 0.6), red * rng.uniform(0.65, 0.85), red])
    # Sun and shade at leaf or clod size: strong, fine, high-contrast texture.
    grain = smooth_noise_2d(rng, h, w, w / rng.uniform(3, 9), octaves=3)
    shade = np.clip(0.75 + rng.uniform(0.25, 0.55) * grain, 0.15, 1.6)[..., None]
    cover = np.zeros((h, w, 1), np.float32) if crop is None else crop[..., None]
    ground = (leaf * cover + soil * (1.0 - cover)).astype(np.float32) * shade
    ground *= (scene.bg_level / 0.45 * _gradient(rng, h, w, rng.uniform(0.0, 0.3)))[..., None]
    ground *= np.array(scene.bg_color, np.float32)
    return cv2.GaussianBlur(np.ascontiguousarray(ground, np.float32), (0, 0), rng.uniform(0.3, 1.2))


def background(rng: np.random.Generator, scene: SceneParams) -> np.ndarray:
    """The scene's background, (H, W, 3) float32 BGR."""
    make = {
        "lab": lab_background,
        "panel": panel_background,
        "field": field_background,
        "canopy": canopy_background,
    }
    return make[scene.background](rng, scene)
