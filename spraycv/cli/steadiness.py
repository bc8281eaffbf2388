"""`predict`'s closing table for a video: each nozzle's reading and how steady it was.

The nozzles are tracked as the daemon tracks them (spraycv.stream.tracking, its default
config): the reading is the last smoothed one, and the spread is taken over the whole video
(over the last `spread_window` readings of a stream, whose length is unknown). Unreliable
readings are counted, not used; a nozzle with no reliable reading shows the commonest reason.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from spraycv.cli.table import TableColumn
from spraycv.config.daemon import TrackingConfig
from spraycv.geometry import ConeMeasurement
from spraycv.stream.tracking import NozzleReading, NozzleTracker

STEADINESS_COLUMNS = (
    TableColumn("source", "source"),
    TableColumn("nozzle", "nozzle"),
    TableColumn("reliable", "reliable"),  # reliable readings / frames the nozzle was seen in
    TableColumn("included", "included_angle_deg", "{:.2f}"),  # the last smoothed reading
    TableColumn("sd", "angle_sd_deg", "{:.2f}"),  # raw, frame by frame
    TableColumn("range", "angle_range_deg", "{:.2f}"),
    TableColumn("apex_sd_px", "apex_sd_px", "{:.1f}"),
    TableColumn("smoothed_sd", "smoothed_angle_sd_deg", "{:.2f}"),
    TableColumn("smoothed_apex_sd_px", "smoothed_apex_sd_px", "{:.1f}"),
)


class VideoSteadiness:
    """Tracks one video's nozzles frame by frame; `rows()` gives the closing table's rows."""

    def __init__(self, source: str, fps: float, frames_expected: int):
        window = max(frames_expected, TrackingConfig().spread_window)
        self.source, self.fps = source, fps
        self.tracker = NozzleTracker(TrackingConfig(spread_window=window))
        self.seen: Counter[int] = Counter()  # frames each nozzle was found in
        self.reliable: Counter[int] = Counter()  # ... with a reading that could be used
        self.reasons: defaultdict[int, Counter[str]] = defaultdict(Counter)
        self.latest: dict[int, NozzleReading] = {}
        self.angle: dict[int, float] = {}  # the last smoothed angle of each nozzle

    def add(self, frame_index: int, measurements: Sequence[ConeMeasurement]) -> None:
        """One frame's measurements."""
        ids = self.tracker.assign([m.apex for m in measurements], frame_index / self.fps)
        for m, nozzle_id in zip(measurements, ids, strict=True):
            if nozzle_id is None:
                continue
            reading = self.tracker.observe(nozzle_id, m)
            self.seen[nozzle_id] += 1
            self.latest[nozzle_id] = reading
            if m.unreliable:
                self.reasons[nozzle_id][m.unreliable] += 1
            if reading.angle_deg is not None:
                self.reliable[nozzle_id] += 1
                self.angle[nozzle_id] = reading.angle_deg

    def rows(self) -> list[dict[str, Any]]:
        return [self._row(nozzle_id) for nozzle_id in sorted(self.seen)]

    def _row(self, nozzle_id: int) -> dict[str, Any]:
        reading = self.latest[nozzle_id]
        raw, smoothed = reading.raw_spread.to_dict(), reading.smoothed_spread.to_dict()
        reasons = self.reasons[nozzle_id]
        unused = nozzle_id not in self.angle and reasons
        return {
            "source": self.source,
            "nozzle": nozzle_id,
            "reliable": f"{self.reliable[nozzle_id]}/{self.seen[nozzle_id]}",
            "included_angle_deg": self.angle.get(nozzle_id),
            "unreliable": reasons.most_common(1)[0][0] if unused else "",
            **raw,
            **{f"smoothed_{k}": v for k, v in smoothed.items()},
        }
