"""Stable nozzle ids along the boom across frames, and smoothing of each nozzle's angle."""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from spraycv.config.daemon import TrackingConfig

Point = tuple[float, float]


@dataclass
class Track:
    nozzle_id: int
    apex: Point
    last_seen: float
    angles: deque[float] = field(default_factory=deque)
    ema: float | None = None


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
                    track.apex, track.last_seen = (float(pts[r, 0]), float(pts[r, 1])), now
                    unmatched.discard(i)
        for i in sorted(unmatched, key=lambda i: apexes[i][0]):  # left to right on the image
            track = Track(self._next_id, (float(apexes[i][0]), float(apexes[i][1])), now)
            self.tracks[track.nozzle_id] = track
            ids[i] = track.nozzle_id
            self._next_id += 1
        return ids

    def smooth(self, nozzle_id: int, angle: float | None) -> float | None:
        """Feed one angle (None: not measured this frame) and return the smoothed angle."""
        track = self.tracks[nozzle_id]
        if angle is None or not math.isfinite(angle):
            return self._current(track)
        cfg = self.config
        track.angles.append(angle)
        while len(track.angles) > cfg.window:
            track.angles.popleft()
        track.ema = (
            angle if track.ema is None else cfg.ema_alpha * angle + (1 - cfg.ema_alpha) * track.ema
        )
        return self._current(track)

    def _current(self, track: Track) -> float | None:
        if not track.angles:
            return None
        smoothing = self.config.smoothing
        if smoothing == "median":
            return float(statistics.median(track.angles))
        if smoothing == "ema":
            return track.ema
        return track.angles[-1]

    def _forget(self, now: float) -> None:
        stale = [
            k for k, t in self.tracks.items() if now - t.last_seen > self.config.forget_after_s
        ]
        for k in stale:
            del self.tracks[k]
