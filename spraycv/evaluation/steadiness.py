"""How steadily a steady spray reads: one rendered video, end to end, as the daemon reads it.

The video's envelopes never move (render_video_frames(steady=True)): only droplets, mist,
density and sensor noise change from frame to frame, so the truth is one number per nozzle
and every bit of spread in the readings is the pipeline's own. Each frame goes through the
Measurer, the NozzleTracker gives ids and smooths, and per nozzle we keep the spread of its
raw (frame by frame) and of its smoothed readings over the whole video.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from spraycv.config.daemon import TrackingConfig
from spraycv.config.render import RenderConfig
from spraycv.data.synth.render import RenderResult
from spraycv.geometry import ConeMeasurement
from spraycv.stream.tracking import NozzleReading, NozzleTracker, Spread, Track

Read = Callable[[np.ndarray], Iterable[ConeMeasurement]]  # an image -> its measurements

# The scenes of benchmarks/steady_spray.py: "single" is one nozzle that is on (the
# real-camera case of issue 15, one flat fan spraying steadily), "boom" the renderer's
# default mix (1 to 8 nozzles, weak and clogged ones too).
SCENES: dict[str, RenderConfig] = {
    "single": RenderConfig.model_validate(
        {"nozzle": {"prob_single": 1.0, "state_probs": {"on": 1.0}}}
    ),
    "boom": RenderConfig(),
}


@dataclass(frozen=True)
class NozzleSteadiness:
    """One nozzle of a steady video: how often it was found and read, its truth and mean
    raw angle (deg), and the spread of its raw and smoothed readings over the video."""

    nozzle_id: int
    truth_deg: float  # the included angle of the truth nozzle at its apex (NaN: none near)
    frames: int  # frames it was found in
    reliable: int  # ... with a reading the tracker used (not unreliable, angle measured)
    mean_raw_deg: float
    raw: Spread
    smoothed: Spread


def _truth_angle(record: dict, apex: tuple[float, float], max_px: float) -> float:
    """The included angle of the truth nozzle whose apex is nearest, within max_px."""
    best, angle = max_px, math.nan
    for nozzle in record.get("nozzles", []):
        distance = math.dist(apex, nozzle["apex"])
        if distance <= best:
            best, angle = distance, float(nozzle["included_angle_deg"])
    return angle


def read_steady_video(
    frames: Iterable[RenderResult], read: Read, tracking: TrackingConfig, fps: float = 5.0
) -> list[NozzleSteadiness]:
    """Read every frame, track and smooth; the spread is taken over all the frames (the
    tracking config's spread_window is raised to cover them)."""
    tracker = NozzleTracker(tracking.model_copy(update={"spread_window": WHOLE_VIDEO}))
    latest: dict[int, NozzleReading] = {}
    seen: Counter[int] = Counter()
    record: dict = {}
    for index, frame in enumerate(frames):
        record = record or frame.record  # a steady video: the first frame's truth holds
        measurements = list(read(frame.image))
        ids = tracker.assign([m.apex for m in measurements], index / fps)
        for m, nozzle_id in zip(measurements, ids, strict=True):
            if nozzle_id is not None:
                latest[nozzle_id] = tracker.observe(nozzle_id, m)
                seen[nozzle_id] += 1
    return [
        _summary(tracker.tracks[k], latest[k], seen[k], record, tracking.max_match_px)
        for k in sorted(latest)
        if k in tracker.tracks  # a nozzle lost for forget_after_s is no steady nozzle
    ]


WHOLE_VIDEO = 10**6  # a spread window longer than any video read here


def _summary(
    track: Track, reading: NozzleReading, frames: int, record: dict, max_px: float
) -> NozzleSteadiness:
    raw = np.array(list(track.raw)).reshape(-1, 3)
    return NozzleSteadiness(
        nozzle_id=track.nozzle_id,
        truth_deg=_truth_angle(record, track.apex, max_px),
        frames=frames,
        reliable=len(raw),
        mean_raw_deg=float(raw[:, 0].mean()) if len(raw) else math.nan,
        raw=reading.raw_spread,
        smoothed=reading.smoothed_spread,
    )
