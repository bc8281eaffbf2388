"""Stable nozzle ids along the boom across frames; each nozzle's smoothed reading and spread.

Smoothing is temporal and reported as such: the raw reading of every frame stays in its
record (`included_angle_deg`, `apex_x`, `apex_y`); the smoothed one is what the spec is
checked on. Readings marked unreliable (ConeMeasurement.unreliable) or not measured are
skipped: they move neither the smoothing nor the spread.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import pdist
from scipy.stats import trim_mean

from spraycv.config.daemon import TrackingConfig
from spraycv.geometry import ConeMeasurement
from spraycv.geometry.types import JsonValue, finite_or_none

Point = tuple[float, float]
NAN = float("nan")


@dataclass(frozen=True)
class Spread:
    """How much a nozzle's readings scatter over a window (NaN below two readings).

    SDs are sample SDs (n - 1). The apex's SD is the RMS distance of the apexes from their
    mean, sqrt(var x + var y); its range the largest distance between two of them.
    """

    n: int
    angle_sd_deg: float = NAN
    angle_range_deg: float = NAN
    apex_sd_px: float = NAN
    apex_range_px: float = NAN

    @staticmethod
    def of(samples: np.ndarray) -> Spread:
        """The spread of (N, 3) readings (angle, apex x, apex y)."""
        n = len(samples)
        if n < 2:
            return Spread(n)
        var = samples.var(axis=0, ddof=1)
        return Spread(
            n=n,
            angle_sd_deg=float(math.sqrt(var[0])),
            angle_range_deg=float(np.ptp(samples[:, 0])),
            apex_sd_px=float(math.sqrt(var[1] + var[2])),
            apex_range_px=float(pdist(samples[:, 1:]).max()),
        )

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "n": self.n,
            "angle_sd_deg": finite_or_none(self.angle_sd_deg),
            "angle_range_deg": finite_or_none(self.angle_range_deg),
            "apex_sd_px": finite_or_none(self.apex_sd_px),
            "apex_range_px": finite_or_none(self.apex_range_px),
        }


@dataclass(frozen=True)
class NozzleReading:
    """One nozzle after one frame: its smoothed angle and apex (None when this frame's own
    reading was unreliable or not measured: nothing is checked on it), and the spread of its
    last `spread_window` raw and smoothed readings."""

    angle_deg: float | None
    apex: Point | None
    raw_spread: Spread
    smoothed_spread: Spread

    def spread_dict(self) -> dict[str, dict[str, JsonValue]]:
        """{"raw": ..., "smoothed": ...}, as /latest serves it."""
        return {"raw": self.raw_spread.to_dict(), "smoothed": self.smoothed_spread.to_dict()}


@dataclass
class Track:
    """A nozzle's state; readings are (3,) arrays: angle, apex x, apex y.

    apex: where the next frame's apexes are matched to: the smoothed apex once the nozzle
    has a reliable reading (one wild apex must not re-number a nozzle), else the last seen.
    """

    nozzle_id: int
    apex: Point
    last_seen: float
    raw: deque[np.ndarray] = field(default_factory=deque)  # the last reliable readings
    smoothed: deque[np.ndarray] = field(default_factory=deque)
    ema: np.ndarray | None = None


Smoother = Callable[[np.ndarray, Track, TrackingConfig], np.ndarray]  # (K, 3) -> (3,)
SMOOTHERS: dict[str, Smoother] = {
    "trimmed_mean": lambda w, t, c: np.asarray(trim_mean(w, c.trim_fraction, axis=0)),
    "median": lambda w, t, c: np.median(w, axis=0),
    "ema": lambda w, t, c: t.ema,
    "none": lambda w, t, c: w[-1],
}


def smooth(track: Track, config: TrackingConfig) -> np.ndarray:
    """(3,) the smoothed angle, over the last `window` readings, and apex, over the last
    `apex_window` (EMA and none ignore the windows)."""
    smoother = SMOOTHERS[config.smoothing]
    readings = np.array(track.raw)
    angle = smoother(readings[-config.window :], track, config)[0]
    apex = smoother(readings[-config.apex_window :], track, config)[1:]
    return np.array([angle, *apex])


def reading_of(m: ConeMeasurement) -> np.ndarray | None:
    """(3,) angle, apex x, apex y of a reliable reading with a finite apex, else None."""
    values = np.array([m.included_angle_deg, *m.apex], float)
    return values if m.reliable and np.isfinite(values).all() else None


class NozzleTracker:
    """Matches each frame's apexes to known nozzles (one tracker per source).

    Nozzles are fixed on the boom, so the apex barely moves: an optimal assignment on apex
    distance, gated by `max_match_px`, keeps ids stable through missed frames. The first
    frame numbers nozzles along the image x axis, so that id 0 is the leftmost.
    """

    def __init__(self, config: TrackingConfig):
        self.config = config
        self.tracks: dict[int, Track] = {}
        self._next_id = 0

    def assign(self, apexes: Sequence[Point], now: float) -> list[int | None]:
        """Apexes (x, y) of one frame -> a nozzle id each (None for a non-finite apex)."""
        self._forget(now)
        valid = [i for i, p in enumerate(apexes) if all(map(math.isfinite, p))]
        ids: list[int | None] = [None] * len(apexes)
        known = list(self.tracks.values())
        unmatched = set(valid)
        if known and valid:
            pts = np.array([apexes[i] for i in valid], float)  # (M, 2)
            ref = np.array([t.apex for t in known], float)  # (K, 2)
            cost = np.linalg.norm(pts[:, None, :] - ref[None, :, :], axis=2)  # (M, K)
            for r, c in zip(*linear_sum_assignment(cost), strict=True):
                if cost[r, c] <= self.config.max_match_px:
                    track = known[c]
                    i = valid[r]
                    ids[i] = track.nozzle_id
                    track.last_seen = now
                    if not track.smoothed:  # no steadier apex yet: follow the last one
                        track.apex = (float(pts[r, 0]), float(pts[r, 1]))
                    unmatched.discard(i)
        for i in sorted(unmatched, key=lambda i: apexes[i][0]):  # left to right on the image
            track = self._new_track((float(apexes[i][0]), float(apexes[i][1])), now)
            self.tracks[track.nozzle_id] = track
            ids[i] = track.nozzle_id
            self._next_id += 1
        return ids

    def observe(self, nozzle_id: int, m: ConeMeasurement) -> NozzleReading:
        """Feed one frame's measurement of a nozzle; returns its reading after it."""
        track, cfg = self.tracks[nozzle_id], self.config
        value = reading_of(m)
        current: np.ndarray | None = None  # stays None: nothing to check in this frame
        if value is not None:
            track.raw.append(value)
            track.ema = value if track.ema is None else (
                cfg.ema_alpha * value + (1 - cfg.ema_alpha) * track.ema
            )  # fmt: skip
            current = smooth(track, cfg)
            track.smoothed.append(current)
            track.apex = (float(current[1]), float(current[2]))
        raw = np.array(list(track.raw)[-cfg.spread_window :]).reshape(-1, 3)
        return NozzleReading(
            angle_deg=None if current is None else float(current[0]),
            apex=None if current is None else (float(current[1]), float(current[2])),
            raw_spread=Spread.of(raw),
            smoothed_spread=Spread.of(np.array(track.smoothed).reshape(-1, 3)),
        )

    def _new_track(self, apex: Point, now: float) -> Track:
        keep = max(self.config.window, self.config.apex_window, self.config.spread_window)
        return Track(
            self._next_id, apex, now,
            raw=deque(maxlen=keep), smoothed=deque(maxlen=self.config.spread_window),
        )  # fmt: skip

    def _forget(self, now: float) -> None:
        stale = [
            k for k, t in self.tracks.items() if now - t.last_seen > self.config.forget_after_s
        ]
        for k in stale:
            del self.tracks[k]
