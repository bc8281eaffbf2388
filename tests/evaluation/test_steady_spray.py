"""A steady spray reads steadily (issue 15): a rendered steady video, end to end with the
shipped model, tracked and smoothed with the daemon's default config.

The suite reads 20 frames of one single-nozzle scene; benchmarks/steady_spray.py reads 60
frames of many scenes (docs/benchmarks.md, "Steady spray"). The model's raw reading of one
frame scatters by a few degrees; the smoothed one, reported apart, must stay within 1 deg
and its apex within 2 px.
"""

from __future__ import annotations

import numpy as np
import pytest

from spraycv.config.daemon import TrackingConfig
from spraycv.data.synth import render_video_frames
from spraycv.evaluation.steadiness import SCENES, read_steady_video
from spraycv.measure import load_measurer
from spraycv.paths import default_weights

SINGLE_NOZZLE = SCENES["single"]  # benchmarks/steady_spray.py's first scene
FRAMES = 20


def test_a_steady_render_keeps_its_envelope_and_flickers() -> None:
    frames = list(render_video_frames(3, 3, 160, 120, SINGLE_NOZZLE, steady=True))
    assert all(np.array_equal(f.mask, frames[0].mask) for f in frames)  # the same envelope
    truth = [{**n, "params": n["params"]["envelope"]} for f in frames for n in f.record["nozzles"]]
    assert all(t == truth[0] for t in truth)  # the same truth (density and haze flicker)
    assert not np.array_equal(frames[0].image, frames[1].image)  # new droplets, mist, noise


def test_by_default_the_front_still_moves() -> None:
    moving = list(render_video_frames(5, 2, 96, 80))
    assert not np.array_equal(moving[0].mask, moving[1].mask)


@pytest.mark.skipif(not default_weights().is_file(), reason="no shipped model")
def test_steady_spray_reads_steadily() -> None:
    measurer = load_measurer(default_weights(), threads=1)
    frames = render_video_frames(0, FRAMES, config=SINGLE_NOZZLE, steady=True)
    found = read_steady_video(frames, lambda im: measurer(im).measurements, TrackingConfig())
    nozzle = max(found, key=lambda n: n.frames)  # the nozzle, not a one-frame phantom
    assert all(n.reliable == 0 for n in found if n is not nozzle)  # phantoms are flagged
    assert nozzle.reliable >= FRAMES - 2, nozzle
    assert abs(nozzle.mean_raw_deg - nozzle.truth_deg) < 3.0, nozzle
    # both readings are reported: the raw one scatters more than the smoothed one
    assert nozzle.raw.angle_sd_deg > nozzle.smoothed.angle_sd_deg, nozzle
    assert nozzle.smoothed.angle_sd_deg <= 1.0, nozzle
    assert nozzle.smoothed.apex_sd_px <= 2.0, nozzle
