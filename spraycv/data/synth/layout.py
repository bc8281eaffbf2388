"""Scene geometry: camera roll, axis, nozzle angles and states, boom placement, envelopes.

Placement guarantees what the ground truth needs: every apex inside the image with a
margin, every visible plume's band (to 0.45 L) inside the image and free of its
neighbours, at least `min_length_frac * size` of each plume visible along its axis.
"""

from __future__ import annotations

import math

import numpy as np

from spraycv.config.render import AppearanceConfig, NozzleDistConfig, RenderConfig
from spraycv.data.synth.envelope import EnvelopeSpec, ensure_straight
from spraycv.data.synth.noise import smooth_noise_1d
from spraycv.data.synth.params import (
    CameraParams,
    NozzleParams,
    SceneParams,
    pick,
    sample_appearance,
    sample_body,
    sample_camera,
    sample_lighting,
    ur,
)

_BAND_CHECK = 0.45  # fraction of L that must be in the image and free of neighbours


def _unit(deg: float) -> tuple[float, float]:
    """Unit vector with tilt `deg` from image-down (tilt = atan2(ux, uy))."""
    t = math.radians(deg)
    return (math.sin(t), math.cos(t))


def _included(rng: np.random.Generator, cfg: NozzleDistConfig) -> float:
    lo, hi = cfg.included_deg_range
    if rng.random() < cfg.prob_catalogue_angle:
        cat = [a for a in cfg.catalogue_angles_deg if lo <= a <= hi] or [0.5 * (lo + hi)]
        theta = float(rng.choice(cat)) + rng.normal(0.0, cfg.catalogue_jitter_deg / 2)
    else:
        theta = ur(rng, (lo, hi))
    return float(np.clip(theta, lo, hi))


def _half_angles(
    rng: np.random.Generator, theta: float, state: str, cfg: NozzleDistConfig
) -> tuple[float, float]:
    """(left, right) half-angles for a nozzle of nominal included angle `theta`."""
    lo_inc = max(cfg.included_deg_range[0], 10.0)
    amin = cfg.min_half_angle_deg
    if state == "clogged":
        if rng.random() < 0.5:  # narrow jet
            theta = ur(rng, cfg.clogged_narrow_included_deg)
        else:  # one-sided: one half keeps its angle, the other collapses
            small = ur(rng, cfg.clogged_one_sided_half_deg)
            big = max(theta / 2, lo_inc - small)
            return (big, small) if rng.random() < 0.5 else (small, big)
    elif state == "weak":
        theta *= ur(rng, cfg.weak_angle_factor)
    theta = max(theta, lo_inc)
    if rng.random() < cfg.prob_asymmetric:
        d = ur(rng, (-cfg.asymmetry_max_deg, cfg.asymmetry_max_deg))
    else:
        d = float(rng.normal(0.0, 0.5))
    d = float(np.clip(d, -(theta - 2 * amin), theta - 2 * amin))
    return (theta / 2 + d / 2, theta / 2 - d / 2)


def _inside(p: np.ndarray, w: int, h: int, m: float) -> bool:
    return bool(m <= p[0] <= w - 1 - m and m <= p[1] <= h - 1 - m)


def _placement_ok(
    apexes: np.ndarray,
    u: np.ndarray,
    halves: list,
    lengths: list,
    visible: list,
    w: int,
    h: int,
    margin: float,
    min_len: float,
) -> bool:
    n_left = np.array([-u[1], u[0]])
    for p, (al, ar), ln, vis in zip(apexes, halves, lengths, visible, strict=True):
        if not _inside(p, w, h, margin):
            return False
        if not vis:
            continue
        a = _BAND_CHECK * ln
        for side in (math.tan(math.radians(al)), -math.tan(math.radians(ar))):
            if not _inside(p + a * (u + side * n_left), w, h, 1.0):
                return False
        if not _inside(p + min(ln, max(0.5 * ln, min_len)) * u, w, h, 1.0):
            return False
    # Neighbours must not meet inside each other's band: left edge of i vs right edge of k.
    t = apexes @ n_left
    for i in range(len(apexes)):
        for k in range(len(apexes)):
            if i == k or not (visible[i] and visible[k]) or t[k] <= t[i]:
                continue
            slope = math.tan(math.radians(halves[k][1])) + math.tan(math.radians(halves[i][0]))
            if (t[k] - t[i]) / slope < 0.5 * max(lengths[i], lengths[k]):
                return False
    return True


def _chord(c: np.ndarray, b: np.ndarray, w: int, h: int, m: float) -> float:
    """Largest s such that c +- s b stays inside the image shrunk by m."""
    lim = math.inf
    for ci, bi, size in ((c[0], b[0], w), (c[1], b[1], h)):
        if abs(bi) > 1e-9:
            lim = min(lim, (ci - m) / abs(bi), (size - 1 - m - ci) / abs(bi))
    return max(lim, 0.0)


def _place(
    rng: np.random.Generator,
    u: np.ndarray,
    halves: list,
    rel_len: list,
    visible: list,
    w: int,
    h: int,
    cfg: NozzleDistConfig,
) -> tuple[np.ndarray, float, float, list, list]:
    """Apexes (N, 2), spacing, L0, half-angles and visibility, by rejection.

    When even the shortest plumes do not fit, a boom loses nozzles from its end (wide
    sprays on a boom are photographed a few at a time); a single nozzle gets narrower.
    """
    size = min(w, h)
    margin, min_len = cfg.apex_margin_frac * size, cfg.min_length_frac * size
    b = np.array([-u[1], u[0]])
    l_start = ur(rng, cfg.length_frac_range) * size
    l0 = l_start
    centre = np.array([(w - 1) / 2, (h - 1) / 2])
    for attempt in range(600):
        n = len(halves)
        min_rel = min([r for r, v in zip(rel_len, visible, strict=True) if v] or [1.0])
        l0 = max(l0, min_len / min_rel)
        lengths = [l0 * r for r in rel_len]
        c = centre + b * ur(rng, (-0.12, 0.12)) * size
        c = c + u * (-0.5 * l0 + ur(rng, (-0.1, 0.15)) * size)
        spacing = 0.0
        if n > 1:
            spacing = 2 * _chord(c, b, w, h, margin) / (n - 1) * ur(rng, (0.55, 1.0))
        offsets = (np.arange(n) - (n - 1) / 2) * spacing
        apexes = c[None, :] + offsets[:, None] * b[None, :]
        if _placement_ok(apexes, u, halves, lengths, visible, w, h, margin, min_len):
            return apexes, spacing, l0, halves, visible
        l0 *= 0.93
        if attempt % 30 == 29:  # still failing at the shortest plumes
            if n > 1:
                halves, rel_len, visible = halves[:-1], rel_len[:-1], visible[:-1]
                if not any(visible):
                    visible = [True, *visible[1:]]
                l0 = l_start
            else:
                halves = [(max(al * 0.85, 5.0), max(ar * 0.85, 5.0)) for al, ar in halves]
    raise RuntimeError("could not place the nozzles")  # unreachable with sane configs


def _ragged(rng: np.random.Generator, cfg: NozzleDistConfig) -> tuple[float, ...]:
    """Relative radial offsets of the far front: a few broad lobes plus finer tufts."""
    n = int(rng.integers(12, 30))
    amp = ur(rng, cfg.ragged_amp_range)
    t = np.linspace(0.0, 1.0, n)
    broad = smooth_noise_1d(rng, int(rng.integers(2, 6)), t)
    fine = smooth_noise_1d(rng, max(n // 2, 2), t)
    v = amp * (0.9 * broad + 0.4 * fine + 0.1 * rng.standard_normal(n))
    return tuple(round(float(x), 5) for x in np.clip(v, -2 * amp, 2 * amp))


def _envelope(
    rng: np.random.Generator,
    apex: np.ndarray,
    u: np.ndarray,
    al: float,
    ar: float,
    length: float,
    gdir: tuple[float, float],
    cfg: NozzleDistConfig,
) -> EnvelopeSpec:
    amax = math.radians(max(al, ar))
    # Flat enough that the corners reach >= 0.6 L, so the edges run well past the band.
    kmin = float(np.clip(1.0 - math.log(0.6) / math.log(math.cos(amax)), 0.0, 1.0))
    lo, hi = cfg.front_flatness_range
    bend = rng.random() < cfg.prob_bend
    spec = EnvelopeSpec(
        apex=(float(apex[0]), float(apex[1])),
        axis=(float(u[0]), float(u[1])),
        half_left_deg=float(al),
        half_right_deg=float(ar),
        length=float(length),
        s_bend=float(length * (ur(rng, cfg.s_bend_frac_range) if bend else 1.2)),
        gravity=ur(rng, cfg.gravity_range) if bend else 0.0,
        gravity_dir=gdir,
        drag=ur(rng, cfg.drag_range) if bend else 0.0,
        front_flatness=ur(rng, (max(lo, kmin), max(hi, kmin))),
        ragged=_ragged(rng, cfg),
    )
    return ensure_straight(spec)


def _boom_draws(
    rng: np.random.Generator, cfg: NozzleDistConfig
) -> tuple[bool, list[str], list[str], list[float]]:
    """How many nozzles a boom carries and each one's type, state and included angle:
    (one nozzle model on the whole boom, types, states, angles in deg)."""
    n = (
        1
        if rng.random() < cfg.prob_single
        else int(rng.integers(cfg.n_boom_range[0], cfg.n_boom_range[1] + 1))
    )
    same = rng.random() < 0.85  # a boom usually carries one nozzle model
    base_type, base_theta = pick(rng, cfg.type_probs), _included(rng, cfg)
    types, states, thetas = [], [], []
    for _ in range(n):
        types.append(base_type if same else pick(rng, cfg.type_probs))
        thetas.append(base_theta if same else _included(rng, cfg))
        states.append(pick(rng, cfg.state_probs))
    if all(s == "off" for s in states):
        states[int(rng.integers(n))] = "on"
    return same, types, states, thetas


def _relative_lengths(
    rng: np.random.Generator, states: list[str], cfg: NozzleDistConfig
) -> list[float]:
    """Each plume's length relative to the boom's: jittered, shorter when weak or clogged."""
    rel = []
    for s in states:
        r = 1.0 + ur(rng, (-cfg.length_jitter, cfg.length_jitter))
        if s == "weak":
            r *= ur(rng, cfg.weak_length_factor)
        elif s == "clogged":
            r *= ur(rng, (0.6, 1.0))
        rel.append(r)
    return rel


def _boom(
    rng: np.random.Generator,
    n: int,
    spacing: float,
    u: np.ndarray,
    body_w: float,
    world_tilt: float,
    appearance: AppearanceConfig,
) -> dict:
    """The boom's record: nozzle count, pitch, direction and its pipe."""
    return {
        "n_nozzles": n,
        "spacing_px": float(spacing),
        "direction": [float(-u[1]), float(u[0])],
        "pipe": n > 1 or rng.random() > appearance.prob_feed_pipe,
        "pipe_radius_px": body_w * ur(rng, (0.3, 0.6)),
        "pipe_color": [ur(rng, (0.45, 0.8))] * 3 if rng.random() < 0.7 else [0.07, 0.07, 0.07],
        "world_tilt_deg": world_tilt,
    }


def _exposed_for(camera: CameraParams, light: dict) -> CameraParams:
    """The camera with its gain set for a bright background (a panel, field or canopy), as a
    camera's auto-exposure would; unchanged in front of a dark one."""
    if light["background"] != "lab":
        level = float(light["bg_level"]) * (1.0 if light["background"] == "panel" else 1.4)
        camera.exposure_gain = float(np.clip(camera.exposure_gain * 0.85 / level, 0.4, 1.2 / level))
    return camera


def sample_scene(
    rng: np.random.Generator, width: int, height: int, config: RenderConfig
) -> SceneParams:
    """Draw one scene's parameters (geometry, appearance, camera)."""
    cfg = config.nozzle
    size = min(width, height)
    px = size / 512.0
    spray_px = px * config.appearance.spray_scale
    light = sample_lighting(rng, config.appearance, spray_px)
    roll = ur(rng, cfg.camera_roll_deg_range) if rng.random() < cfg.prob_rotated_camera else 0.0
    world_tilt = (
        float(rng.normal(0.0, cfg.straight_jitter_deg))
        if rng.random() < cfg.prob_straight_down
        else ur(rng, cfg.tilt_deg_range)
    )
    u = np.array(_unit(world_tilt + roll))
    gdir = _unit(roll)
    same, types, states, thetas = _boom_draws(rng, cfg)
    visible = [s != "off" for s in states]
    halves = [_half_angles(rng, t, s, cfg) for t, s in zip(thetas, states, strict=True)]
    rel = _relative_lengths(rng, states, cfg)
    apexes, spacing, l0, halves, visible = _place(rng, u, halves, rel, visible, width, height, cfg)
    n = len(apexes)
    for i in range(n):
        if visible[i] and states[i] == "off":  # a trimmed boom keeps one nozzle spraying
            states[i] = "on"
    body_w = ur(rng, cfg.body_width_frac_range) * size
    max_w = 0.7 * spacing if n > 1 else body_w
    body = sample_body(rng, body_w, max_w, cfg.body_shape_probs)  # one model on the boom
    nozzles = []
    for i in range(n):
        env = _envelope(rng, apexes[i], u, *halves[i], l0 * rel[i], gdir, cfg)
        app = sample_appearance(rng, types[i], states[i], config.appearance, spray_px)
        if not same:
            body = sample_body(rng, body_w, max_w, cfg.body_shape_probs)
        nozzles.append(NozzleParams(i, types[i], states[i], env, thetas[i], body=body, **app))
    boom = _boom(rng, n, spacing, u, body_w, world_tilt, config.appearance)
    camera = _exposed_for(sample_camera(rng, config.camera, px), light)
    return SceneParams(
        width=width,
        height=height,
        camera_roll_deg=roll,
        gravity_dir=gdir,
        boom=boom,
        camera=camera,
        nozzles=nozzles,
        spray_px=spray_px,
        **light,
    )
