"""A short video of one scene: same nozzles every frame; droplets, mist and front change.

Per frame the scene geometry, hardware, background and camera settings stay fixed; the
spray's random texture, the sensor noise, the spray density and the ragged far front
fluctuate, so each frame has its own ground truth record (its own `length_px`).

A steady video (`steady=True`) keeps the whole envelope, far front included, the same in
every frame: only the droplets, the mist, the spray density and the sensor noise flicker,
as with a steady spray filmed over time. Its truth is the same in every frame, so any
spread of the readings is the measuring's own (benchmarks/steady_spray.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from spraycv.config.render import RenderConfig
from spraycv.data.synth.envelope import ensure_straight
from spraycv.data.synth.layout import sample_scene
from spraycv.data.synth.params import SceneParams
from spraycv.data.synth.render import RenderResult, compose, streams
from spraycv.data.synth.styles import pick_look, restyle_scene, styled_config


def _frame_scene(
    scene: SceneParams, alt: list[np.ndarray], phase: float, jitter: np.ndarray
) -> SceneParams:
    """The scene at one instant: front and density fluctuate around their sampled values."""
    nozzles = []
    for nz, r1, j in zip(scene.nozzles, alt, jitter, strict=True):
        w = 0.5 - 0.5 * math.cos(phase)  # a convex mix keeps the front's amplitude bounds
        ragged = tuple(
            float(v) for v in np.round((1 - w) * np.asarray(nz.envelope.ragged) + w * r1, 5)
        )
        env = ensure_straight(replace(nz.envelope, ragged=ragged))
        nozzles.append(replace(nz, envelope=env, density=nz.density * j[0], haze=nz.haze * j[1]))
    return replace(scene, nozzles=nozzles)


def render_video_frames(
    seed: int,
    n_frames: int = 36,
    width: int = 640,
    height: int = 480,
    config: RenderConfig | None = None,
    steady: bool = False,
) -> Iterator[RenderResult]:
    """Frames of one scene, each with its exact ground truth (records carry "frame").

    The video has one style, drawn from the seed; its props, dust and sensor settings are
    the same in every frame. steady: the envelope does not move (see the module's doc).
    """
    config = config or RenderConfig()
    look = pick_look(seed, config.styles)
    rng_geo, _, _, _ = streams(seed)
    scene = sample_scene(rng_geo, width, height, styled_config(config, look))
    scene = restyle_scene(scene, look, seed, config.styles)
    var = np.random.default_rng(np.random.SeedSequence([seed, 0x71DE0]))
    # A second front of the same statistics per nozzle; frames rotate between the two.
    alt = [
        np.roll(np.asarray(nz.envelope.ragged)[::-1], int(var.integers(1, 8)))
        for nz in scene.nozzles
    ]
    if steady:  # the front "rotates" to itself; the draws above keep the other streams as-is
        alt = [np.asarray(nz.envelope.ragged) for nz in scene.nozzles]
    cycles = var.uniform(0.5, 1.5)
    for f in range(n_frames):
        phase = 2 * math.pi * cycles * f / max(n_frames, 1)
        jitter = var.uniform(0.9, 1.1, (len(scene.nozzles), 2))
        frame = _frame_scene(scene, alt, phase, jitter)
        _, rng_scene, _, _ = streams(seed)  # same background and hardware every frame
        rng_spray, rng_cam = (
            np.random.default_rng(s) for s in np.random.SeedSequence([seed, f]).spawn(2)
        )
        frame_id = f"video-{seed}-{f:04d}"
        res = compose(frame, rng_scene, rng_spray, rng_cam, seed, frame_id, look, config.styles)
        res.record["frame"] = f
        yield res


def render_video(
    out: Path,
    seed: int = 0,
    n_frames: int = 36,
    fps: float = 10.0,
    width: int = 640,
    height: int = 480,
    config: RenderConfig | None = None,
    steady: bool = False,
) -> Path:
    """Write `out` (.mp4, mp4v codec) and its per-frame ground truth `out.with_suffix('.jsonl')`.

    Records carry "frame" and "time_s". steady: see render_video_frames. Returns `out`.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
    if not writer.isOpened():
        raise OSError(f"cannot open a video writer for {out}")
    try:
        with out.with_suffix(".jsonl").open("w") as f:
            for res in render_video_frames(seed, n_frames, width, height, config, steady):
                writer.write(res.image)
                res.record["time_s"] = res.record["frame"] / fps
                f.write(json.dumps(res.record, separators=(",", ":")) + "\n")
    finally:
        writer.release()
    return out
