"""The History page's queries: a time range and a source -> measurements and events tables."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import pandas as pd

from spraycv.dashboard.live import local_times, segments
from spraycv.stream.records import EventKind

# The API's largest page (spraycv/stream/api.py); the page warns when a query fills it.
MAX_ROWS = 100_000

PRESETS: dict[str, float | None] = {  # label -> length in seconds (None: pick dates)
    "Last 15 minutes": 15 * 60,
    "Last hour": 3600,
    "Last 24 hours": 24 * 3600,
    "Last 7 days": 7 * 24 * 3600,
    "Custom": None,
}


class HistorySource(Protocol):
    """What History reads from: a DaemonClient (the API) or a StoreReader (the SQLite file)."""

    def measurements(
        self, since: float = 0.0, until: float | None = None, source: str | None = None,
        limit: int = 10_000,
    ) -> list[dict[str, Any]]: ...  # fmt: skip

    def events(
        self, since: float = 0.0, until: float | None = None, source: str | None = None,
        limit: int = 10_000,
    ) -> list[dict[str, Any]]: ...  # fmt: skip


def now() -> float:
    """The clock History's ranges end at (a function, so tests can pin it)."""
    return time.time()


@dataclass(frozen=True)
class TimeRange:
    since: float
    until: float

    @property
    def text(self) -> str:
        fmt = "%Y-%m-%d %H:%M:%S"
        start, end = datetime.fromtimestamp(self.since), datetime.fromtimestamp(self.until)
        return f"{start.strftime(fmt)} → {end.strftime(fmt)}"


def preset_range(preset: str, end: float | None = None) -> TimeRange:
    """The range of a preset ending now (or at `end`); KeyError/ValueError for Custom."""
    length = PRESETS[preset]
    if length is None:
        raise ValueError("the Custom range needs explicit dates")
    until = now() if end is None else end
    return TimeRange(until - length, until)


def custom_range(start: datetime, end: datetime) -> TimeRange:
    """Local datetimes from the date pickers; raises ValueError when the end is not after."""
    since, until = start.timestamp(), end.timestamp()
    if until <= since:
        raise ValueError("the end of the range must be after its start")
    return TimeRange(since, until)


@dataclass(frozen=True)
class History:
    measurements: pd.DataFrame  # the store's columns plus a local datetime "when"
    events: pd.DataFrame
    truncated: bool  # a query returned MAX_ROWS rows: there may be more

    @property
    def counts(self) -> dict[str, int]:
        """The page's headline numbers (frames with no spray have no measurement rows)."""
        m, e = self.measurements, self.events
        key = [c for c in ("machine", "source", "frame_no", "time") if c in m.columns]
        frames = len(m[key].drop_duplicates()) if len(m) else 0  # a fleet: per machine too
        return {
            "measurements": len(m),
            "frames with spray": frames,
            "events": len(e),
            "alarms raised": int((e["kind"] == EventKind.ALARM_RAISED).sum()) if len(e) else 0,
        }


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if not df.empty:
        df.insert(0, "when", local_times(df["time"]))
        df = df.drop(columns=["id"], errors="ignore")
    return df


def load_history(
    reader: HistorySource, span: TimeRange, source: str | None, limit: int = MAX_ROWS
) -> History:
    """Both tables for a range and a source (None: every source), oldest first."""
    rows = reader.measurements(span.since, span.until, source, limit)
    events = reader.events(span.since, span.until, source, limit)
    return History(_table(rows), _table(events), len(rows) >= limit or len(events) >= limit)


def angle_series(measurements: pd.DataFrame) -> pd.DataFrame:
    """Per placed nozzle: time, 'source / nozzle N', angle (smoothed, else raw) for plotting."""
    cols = ["time", "series", "angle_deg", "segment"]
    if measurements.empty:
        return pd.DataFrame(columns=cols)
    df = measurements[measurements["nozzle_id"].notna()].copy()
    smoothed = pd.to_numeric(df["smoothed_angle_deg"], errors="coerce")
    df["angle_deg"] = smoothed.fillna(pd.to_numeric(df["included_angle_deg"], errors="coerce"))
    place = df["source"]
    if "machine" in df and df["machine"].nunique() > 1:  # a fleet: sources repeat per machine
        place = df["machine"] + " / " + place
    df["series"] = place + " / nozzle " + df["nozzle_id"].astype(int).astype(str)
    df["time"] = df["when"]
    df = df.dropna(subset=["angle_deg"])
    df["segment"] = segments(df, "series")
    return df[cols].reset_index(drop=True)
