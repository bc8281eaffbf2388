"""The scene around the sprays: backgrounds, the spray lit over them, the hardware that
holds the nozzles, and brackets or hoses beside them."""

from __future__ import annotations

import itertools
import math
from typing import Any

import cv2
import numpy as np

from photo_drawer.common import Rng, crop_of, smooth_noise
from photo_drawer.layout import Mount, Nozzle

CAPS = (  # ISO 10625 nozzle colours, BGR
    (0, 120, 255), (40, 150, 40), (0, 210, 235), (190, 130, 190), (190, 90, 20),
    (30, 30, 200), (30, 70, 120), (140, 140, 140), (230, 230, 230), (35, 35, 35),
)  # fmt: skip
BODIES = ((30, 30, 30), (110, 110, 115), (60, 140, 190), (175, 175, 180))  # plastic, brass, steel


def booth(w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """A dark test booth: black curtain folds or a dark wall with a faint rig frame."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    img = rng.uniform(4, 38) + rng.uniform(-12, 12) * xx / w + rng.uniform(-10, 10) * yy / h
    img += 2.5 * smooth_noise(h, w, 0.15 * w, rng)
    kind = "curtain" if rng.random() < 0.5 else "wall"
    if kind == "curtain":
        period = rng.uniform(0.04, 0.12) * w
        img += rng.uniform(3, 10) * np.sin(
            2 * np.pi * xx / period + 1.5 * smooth_noise(h, w, 0.3 * h, rng)
        )
    else:
        for _ in range(int(rng.integers(0, 3))):  # aluminium profiles of the rig, faintly lit
            x = int(rng.uniform(0, w))
            cv2.rectangle(
                img,
                (x, 0),
                (x + int(rng.uniform(6, 20)), h),
                float(img.mean() + rng.uniform(8, 25)),
                -1,
            )
    img += smooth_noise(h, w, 3, rng) * rng.uniform(0.5, 2)
    tint = 1 + rng.normal(0, 0.05, 3)
    return np.clip(img, 0, 255)[..., None] * tint, kind


def diffuser(w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """A bright LED diffuser behind the spray: a hot spot, falling off to the edges,
    sometimes a seam between panels."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy, spread = (
        rng.uniform(0.3, 0.7) * w,
        rng.uniform(0.3, 0.7) * h,
        rng.uniform(0.4, 1.0) * max(w, h),
    )
    img = rng.uniform(165, 235) + rng.uniform(0, 30) * np.exp(
        -((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * spread**2)
    )
    img -= rng.uniform(0, 25) * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2) * 4
    img += 1.5 * smooth_noise(h, w, 0.1 * w, rng)
    kind = "diffuser"
    if rng.random() < 0.3:
        kind = "diffuser_seam"
        x = int(rng.uniform(0.1, 0.9) * w)
        cv2.line(
            img, (x, 0), (x, h), float(img.mean() - rng.uniform(10, 35)), int(rng.integers(2, 6))
        )
    tint = 1 + rng.normal(0, 0.03, 3)
    return np.clip(img, 0, 255)[..., None] * tint, kind


def ground(w: int, h: int, kind: str, rng: Rng) -> np.ndarray:
    """(h, w, 3) BGR crop canopy in rows, or bare soil (lumpy, with straw)."""
    xx = np.mgrid[0:h, 0:w][1].astype(np.float32)
    fine, coarse = smooth_noise(h, w, 4, rng), smooth_noise(h, w, 40, rng)
    soil = np.array([50, 80, 115]) * rng.uniform(0.7, 1.2)
    img = soil * (1 + 0.12 * fine[..., None] + 0.1 * coarse[..., None])
    if kind == "crop":
        period = rng.uniform(0.12, 0.3) * w
        rows = np.cos(
            2 * np.pi * (xx - rng.uniform(0, period)) / period + 0.4 * smooth_noise(h, w, 60, rng)
        )
        leaves = np.clip(rows + 0.6 + 0.8 * smooth_noise(h, w, 6, rng), 0, 1)[..., None]
        green = (
            np.array([45, 125, 70])
            * rng.uniform(0.7, 1.2)
            * (1 + 0.3 * smooth_noise(h, w, 5, rng))[..., None]
        )
        img = img * (1 - leaves) + green * leaves
    else:
        for _ in range(int(rng.integers(20, 80))):  # straw
            p = rng.uniform(0, 1, 2) * [w, h]
            q = p + rng.normal(0, 12, 2)
            cv2.line(
                img, tuple(p.astype(int)), tuple(q.astype(int)), (110, 170, 190), 1, cv2.LINE_AA
            )
    return img


def field(w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """Outdoors: crop or soil, sometimes with the sky above a horizon; lit by the sun."""
    kind = str(rng.choice(["crop", "soil", "sky_crop", "sky_soil"], p=[0.35, 0.25, 0.25, 0.15]))
    img = ground(w, h, kind.removeprefix("sky_"), rng) * rng.uniform(0.6, 1.1)
    if kind.startswith("sky"):
        horizon = int(rng.uniform(0.15, 0.5) * h)
        t = np.linspace(0, 1, horizon, dtype=np.float32)[:, None, None]
        top, low = np.array([215, 160, 100]), np.array([240, 225, 205])
        sky = top * (1 - t) + low * t + 0 * np.zeros((1, w, 1))
        clouds = np.clip(smooth_noise(horizon, w, 0.2 * w, rng) - 0.3, 0, 1)[..., None]
        sky = sky * (1 - 0.6 * clouds) + 245 * 0.6 * clouds
        img[:horizon] = sky * rng.uniform(0.85, 1.05)
    return np.clip(img, 0, 255), kind


def backdrop(style: str, w: int, h: int, rng: Rng) -> tuple[np.ndarray, str]:
    """(h, w, 3) float32 BGR background of the style, and what it is."""
    img, kind = {"front_lit": booth, "back_lit": diffuser, "outdoor": field}[style](w, h, rng)
    return img.astype(np.float32), kind


def compose(
    style: str, bg: np.ndarray, layers: dict[str, np.ndarray], rng: Rng
) -> tuple[np.ndarray, dict[str, float]]:
    """Spray over background: back-lit it darkens the diffuser; front-lit and outdoors it
    scatters light, brighter on the side the lamp or the sun is on (by 1 + side_k at that
    edge, 1 - side_k at the other). Returns the image and the lighting drawn."""
    cover, side = layers["cover"][..., None], layers["side"][..., None]
    sun = rng.choice([-1, 1])
    if style == "back_lit":
        tone, k = rng.uniform(15, 80), rng.uniform(0, 0.15)
        shade = tone * (1 + k * sun * side)
        image = bg * (1 - rng.uniform(0.75, 0.97) * cover) + 0.9 * cover * shade
        return image, {"side_k": k, "spray_tone": tone}
    h, w = bg.shape[:2]
    k = rng.uniform(0.1, 0.3) if style == "front_lit" else rng.uniform(0.3, 0.6)
    lamp = 1 + 0.15 * np.clip(smooth_noise(h, w, 0.5 * max(h, w), rng), -1.5, 1.5)[..., None]
    tone = rng.uniform(170, 255)
    tint = np.array([1.04, 1.0, 0.96]) if style == "outdoor" else 1 + rng.normal(0, 0.02, 3)
    keep = rng.uniform(0.4, 0.6) if style == "front_lit" else rng.uniform(0.6, 0.85)
    bright = tone * lamp * (1 + k * sun * side)
    image = bg * (1 - keep * cover) + cover * bright * tint
    return image, {"side_k": k, "spray_tone": tone}


def cylinder(
    img: np.ndarray,
    hw: np.ndarray,
    p0: np.ndarray,
    p1: np.ndarray,
    radius: float,
    colour: Any,
    light: float,
    spec: float,
    facets: bool = False,
) -> None:
    """A shaded cylinder (or hex nut with facets) from p0 to p1 drawn over img, in place;
    hw marks (0-1) the pixels it covers."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    length = float(np.hypot(*(p1 - p0)))
    if length < 1e-3:
        return
    u = (p1 - p0) / length
    n = np.array([-u[1], u[0]])
    corners = np.array([p0 + n * radius, p0 - n * radius, p1 + n * radius, p1 - n * radius])
    box = crop_of(corners, img.shape[1], img.shape[0], 2)
    if box is None:
        return
    x0, y0, x1, y1 = box
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    t = (xs - p0[0]) * u[0] + (ys - p0[1]) * u[1]
    v = ((xs - p0[0]) * n[0] + (ys - p0[1]) * n[1]) / radius
    alpha = np.clip((1 - np.abs(v)) * radius + 0.5, 0, 1) * np.clip(
        np.minimum(t, length - t) + 0.5, 0, 1
    )
    vq = np.round(v * 1.5) / 1.5 if facets else v
    shade = light * (0.3 + 0.7 * np.sqrt(np.clip(1 - vq * vq, 0, 1))) * (1 + 0.25 * v)
    col = (
        np.asarray(colour, np.float32) * shade[..., None]
        + spec * 255 * np.exp(-(((vq - 0.35) / 0.15) ** 2))[..., None]
    )
    sl = np.s_[y0:y1, x0:x1]
    img[sl] = img[sl] * (1 - alpha[..., None]) + col * alpha[..., None]
    hw[sl] = np.maximum(hw[sl], alpha)


def hardware_light(style: str, rng: Rng) -> tuple[float, float]:
    """(light, specular) of the hardware: lit in the booth and outdoors, a silhouette on the
    diffuser."""
    if style == "back_lit":
        return rng.uniform(0.2, 0.4), rng.uniform(0.05, 0.2)
    return rng.uniform(0.75, 1.15), rng.uniform(0.3, 0.8)


def hardware(
    img: np.ndarray, hw: np.ndarray, nozzles: list[Nozzle], mount: Mount, style: str, rng: Rng
) -> None:
    """The boom pipe or stem, then each nozzle: a drop pipe to the boom, a body, a coloured
    cap, and a metal tip ending at the orifice."""
    light, spec = hardware_light(style, rng)
    metal = np.array([170, 170, 175]) if rng.random() < 0.6 else np.array([40, 40, 45])
    cap, body = CAPS[int(rng.integers(len(CAPS)))], BODIES[int(rng.integers(len(BODIES)))]
    if mount.kind == "boom":
        p, along = mount.path[0], mount.path[1] - mount.path[0]
        far = 3.0 * max(img.shape[:2])
        cylinder(img, hw, p - far * along, p + far * along, mount.radius, metal, light, spec)
        normal = np.array([-along[1], along[0]])
        for nz in nozzles:
            back = nz.apex - 1.85 * nz.size * nz.axis
            reach = float((back - p) @ normal / (nz.axis @ normal))  # along -axis to the pipe
            cylinder(img, hw, back, back - reach * nz.axis, 0.22 * nz.size, metal, light, spec)
            cylinder(
                img,
                hw,
                back - (reach - 1.2 * mount.radius) * nz.axis,
                back - (reach + 0.6 * mount.radius) * nz.axis,
                1.25 * mount.radius,
                body,
                light,
                spec,
                True,
            )
    else:
        for q0, q1 in itertools.pairwise(mount.path):
            cylinder(img, hw, q0, q1, mount.radius, metal, light, spec)
    for nz in nozzles:
        s, back = nz.size, -nz.axis
        cylinder(
            img, hw, nz.apex + back * 0.9 * s, nz.apex + back * 1.9 * s, 0.42 * s, body, light, spec
        )
        cylinder(
            img,
            hw,
            nz.apex + back * 0.3 * s,
            nz.apex + back * 0.95 * s,
            0.55 * s,
            cap,
            light,
            spec,
            True,
        )
        cylinder(img, hw, nz.apex, nz.apex + back * 0.35 * s, 0.2 * s, metal, light, spec)


def clear_of(cones: np.ndarray, points: np.ndarray) -> bool:
    """Whether none of points (px) falls on a cone of the (H, W) membership."""
    h, w = cones.shape
    xi = np.clip(np.round(points[:, 0]).astype(int), 0, w - 1)
    yi = np.clip(np.round(points[:, 1]).astype(int), 0, h - 1)
    return bool((cones[yi, xi] < 0.5).all())


def distractor(
    img: np.ndarray, hw: np.ndarray, cones: np.ndarray, nozzles: list[Nozzle], style: str, rng: Rng
) -> str:
    """Sometimes a lit bracket or a hose, clear of the sprays or (now and then) in front
    of one; returns what was drawn."""
    if rng.random() > 0.45:
        return "none"
    h, w = cones.shape
    short, light, spec = min(h, w), *hardware_light(style, rng)
    kind, in_front = str(rng.choice(["bracket", "hose"])), rng.random() < 0.2
    for _ in range(20):
        if kind == "bracket":
            angle = math.radians(rng.choice([0, 90]) + rng.uniform(-12, 12))
            centre, half = rng.uniform(0, 1, 2) * [w, h], rng.uniform(0.08, 0.22) * short
            d = np.array([math.cos(angle), math.sin(angle)]) * half
            path, radius = np.array([centre - d, centre + d]), rng.uniform(0.008, 0.02) * short
        else:
            nz = nozzles[int(rng.integers(len(nozzles)))]
            end = nz.apex - 2.5 * nz.size * nz.axis
            start = np.array([rng.choice([-20, w + 20]), rng.uniform(0, 0.6) * h])
            mid = (start + end) / 2 + rng.normal(0, 0.15 * short, 2)
            tt = np.linspace(0, 1, 40)[:, None]
            path = (1 - tt) ** 2 * start + 2 * tt * (1 - tt) * mid + tt**2 * end
            radius = rng.uniform(0.01, 0.022) * short
        dense = np.vstack([np.linspace(p, q, 12) for p, q in itertools.pairwise(path)])
        if in_front or clear_of(cones, dense):
            break
    else:
        return "none"
    colour = (205, 205, 210) if kind == "bracket" else CAPS[int(rng.choice([9, 4, 8, 0]))]
    boost = 1.3 if kind == "bracket" else 1.0
    for q0, q1 in itertools.pairwise(path):
        cylinder(img, hw, q0, q1, radius, colour, light * boost, spec * boost)
    return kind + ("_in_front" if not clear_of(cones, dense) else "")
