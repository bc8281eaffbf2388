"""What the Live page shows, computed from the daemon's records: cards, caption, alarms, trend."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd

from spraycv.config.daemon import SpecRule
from spraycv.dashboard.specs import SpecTable
from spraycv.stream.records import EventKind, SpecStatus


@dataclass(frozen=True)
class StatusStyle:
    text: str
    colour: str  # CSS colour of the card's edge, tint and status pill
    ink: str = "#ffffff"  # text on the pill (dark on amber, which white does not read on)


# The operator's colour code: green ok, amber out of spec, red alarm, grey otherwise.
STATUS_STYLES: dict[SpecStatus, StatusStyle] = {
    SpecStatus.OK: StatusStyle("OK", "#1e8e3e"),
    SpecStatus.OUT_OF_SPEC: StatusStyle("OUT OF SPEC", "#f29900", "#202124"),
    SpecStatus.ALARM: StatusStyle("ALARM", "#d93025"),
    SpecStatus.NO_SPEC: StatusStyle("NO SPEC", "#80868b"),
    SpecStatus.NOT_MEASURED: StatusStyle("NOT MEASURED", "#80868b"),
    SpecStatus.UNRELIABLE: StatusStyle("UNRELIABLE", "#9aa0a6", "#202124"),
}
UNKNOWN_STATUS = StatusStyle("UNKNOWN", "#80868b")


def status_style(status: str) -> StatusStyle:
    """The style of a stored status (a str enum: the stored string finds its member)."""
    return STATUS_STYLES.get(status, UNKNOWN_STATUS)


def fmt_angle(value: float | None) -> str:
    """The one display format of an angle: one decimal and a degree sign (— when missing)."""
    return f"{value:.1f}°" if value is not None and math.isfinite(value) else "—"


def reasons_text(unreliable: str) -> str:
    """'low_edge_contrast;no_apex_support' -> 'low edge contrast, no apex support'."""
    return ", ".join(r.replace("_", " ") for r in unreliable.split(";") if r)


def clock(t: float) -> str:
    """Unix time -> HH:MM:SS in the dashboard machine's local time."""
    return datetime.fromtimestamp(t).strftime("%H:%M:%S")


@dataclass(frozen=True)
class NozzleCard:
    """One nozzle of the newest frame, as its card shows it."""

    source: str
    nozzle_id: int
    frame_no: int
    smoothed_deg: float | None  # what the spec is checked on (the daemon's smoothing)
    raw_deg: float | None  # this frame's measurement
    status: str
    rule: SpecRule | None
    length_mm: float | None = None  # with the source's calibration (mm_per_px)
    coverage_width_mm: float | None = None  # with the rig's nozzle height
    unreliable: str = ""  # why this frame's reading cannot be used ('' when it can)
    confidence: float | None = None
    spread: Mapping[str, Any] | None = None  # /latest's {"raw": Spread, "smoothed": Spread}

    @property
    def calibrated_text(self) -> str:
        """'length 148 mm · coverage 1.05 m', or '' for an uncalibrated source."""
        parts = []
        if self.length_mm is not None:
            parts.append(f"length {self.length_mm:.0f} mm")
        if self.coverage_width_mm is not None:
            parts.append(f"coverage {self.coverage_width_mm / 1000:.2f} m")
        return " · ".join(parts)

    @property
    def angle_deg(self) -> float | None:
        """The big number: the smoothed angle, the raw one before smoothing has a value."""
        return self.smoothed_deg if self.smoothed_deg is not None else self.raw_deg

    @property
    def label(self) -> str:
        return f"Nozzle {self.nozzle_id}"

    @property
    def value_text(self) -> str:
        return fmt_angle(self.angle_deg)

    @property
    def raw_text(self) -> str:
        """'raw 55.1°', or for an unreliable reading its reason in place of the angle."""
        if self.unreliable:
            return f"unreliable: {reasons_text(self.unreliable)}"
        return f"raw {fmt_angle(self.raw_deg)}"

    @property
    def tint(self) -> str:
        """What the card's colour says: its status, or greyed out (the unreliable status's
        grey) for an unreliable reading, even with an alarm open."""
        return str(SpecStatus.UNRELIABLE) if self.unreliable else self.status

    @property
    def spread_text(self) -> str:
        """The steadiness of the last readings, smoothed (as shown) then raw; '' before two."""
        smoothed, raw = (self.spread or {}).get("smoothed"), (self.spread or {}).get("raw")
        if not smoothed or not raw or smoothed.get("angle_sd_deg") is None:
            return ""
        return (
            f"last {smoothed['n']}: SD {smoothed['angle_sd_deg']:.1f}°, range "
            f"{smoothed['angle_range_deg']:.1f}° · apex SD {smoothed['apex_sd_px']:.1f} px, "
            f"range {smoothed['apex_range_px']:.1f} px · raw SD {raw['angle_sd_deg']:.1f}°, "
            f"apex {raw['apex_sd_px']:.1f} px"
        )

    @property
    def spec_text(self) -> str:
        if self.rule is None:
            return "no spec"
        return f"spec {self.rule.nominal_deg:g} ± {self.rule.tolerance_deg:g}°"

    @property
    def style(self) -> StatusStyle:
        return status_style(self.status)


def nozzle_cards(record: dict[str, Any], specs: SpecTable | None = None) -> list[NozzleCard]:
    """The cards of one /latest frame record, by nozzle id (unplaced plumes have no card)."""
    specs = specs or SpecTable()
    cards = [
        NozzleCard(
            source=record["source"],
            nozzle_id=int(n["nozzle_id"]),
            frame_no=int(record["frame_no"]),
            smoothed_deg=n["smoothed_angle_deg"],
            raw_deg=n["included_angle_deg"],
            status=n["spec_status"],
            rule=specs.rule(record["source"], n["nozzle_id"]),
            length_mm=n.get("length_mm"),
            coverage_width_mm=n.get("coverage_width_mm"),
            unreliable=n.get("unreliable") or "",
            confidence=n.get("confidence"),
            spread=n.get("spread"),
        )
        for n in record.get("nozzles", [])
        if n.get("nozzle_id") is not None
    ]
    return sorted(cards, key=lambda c: c.nozzle_id)


def unplaced(record: dict[str, Any]) -> int:
    """Plumes of the frame the tracker could not give an id (no apex found)."""
    return sum(n.get("nozzle_id") is None for n in record.get("nozzles", []))


CAPTION_SEP = " · "
_CAPTION = re.compile(r"^(?P<source>[A-Za-z0-9_.-]+) · frame (?P<frame>\d+) · ")


def frame_caption(record: dict[str, Any]) -> str:
    """'cam0 · frame 123 · 14:02:11': ties the numbers shown to a stored frame."""
    return CAPTION_SEP.join(
        [record["source"], f"frame {record['frame_no']}", clock(float(record["time"]))]
    )


def parse_caption(text: str) -> tuple[str, int] | None:
    """(source, frame number) of a caption made by frame_caption, else None."""
    match = _CAPTION.match(text.strip())
    return (match["source"], int(match["frame"])) if match else None


@dataclass(frozen=True)
class OpenAlarm:
    source: str
    nozzle_id: int | None
    since: float
    angle_deg: float | None
    message: str
    snapshot: str | None

    @property
    def text(self) -> str:
        nozzle = f"nozzle {self.nozzle_id}" if self.nozzle_id is not None else "a nozzle"
        detail = self.message or f"{nozzle}: {fmt_angle(self.angle_deg)}"
        return f"{self.source} · {detail} · since {clock(self.since)}"


# what an operator must act on until its counterpart comes: a nozzle out of spec, a camera
# too dark or too flat to trust (keyed by source and nozzle id, None for the camera's own)
OPENS = frozenset({EventKind.ALARM_RAISED, EventKind.UNDER_EXPOSED, EventKind.FLAT_FRAMES})
CLOSES = frozenset({EventKind.ALARM_CLEARED, EventKind.EXPOSURE_RESTORED})


def open_alarms(events: Iterable[dict[str, Any]]) -> list[OpenAlarm]:
    """Alarms raised and not cleared since, per (source, nozzle), oldest first; a camera
    under-exposed or flat and not exposed again since is one too (nozzle None).

    events: /events rows, oldest first. Pass the events since the daemon started: its
    alarm state lives in memory, so alarms from before a restart are void.
    """
    active: dict[tuple[str, int | None], OpenAlarm] = {}
    for e in events:
        key = (e["source"], e.get("nozzle_id"))
        if e["kind"] in OPENS:
            active[key] = OpenAlarm(
                e["source"], e.get("nozzle_id"), float(e["time"]), e.get("angle_deg"),
                e.get("message") or "", e.get("snapshot"),
            )  # fmt: skip
        elif e["kind"] in CLOSES:
            active.pop(key, None)
    return sorted(active.values(), key=lambda a: a.since)


class TrendBuffer:
    """The last `window_s` of one source's measurements, fetched incrementally.

    A frame's rows are committed in one transaction and a source's frames in time order, so
    after seeing rows up to time T every row with time <= T has been seen: the next fetch
    asks from T on and keeps only what is newer.
    """

    def __init__(self, window_s: float):
        self.window_s = window_s
        self.rows: list[dict[str, Any]] = []

    @property
    def last_time(self) -> float | None:
        return self.rows[-1]["time"] if self.rows else None

    def since(self, now: float) -> float:
        """Where the next /measurements query starts."""
        start = now - self.window_s
        return max(start, self.last_time) if self.last_time is not None else start

    def add(self, rows: Iterable[dict[str, Any]], now: float) -> None:
        last = self.last_time
        self.rows.extend(r for r in rows if last is None or r["time"] > last)
        cutoff = now - self.window_s
        if self.rows and self.rows[0]["time"] < cutoff:
            self.rows = [r for r in self.rows if r["time"] >= cutoff]


def local_times(seconds: pd.Series) -> pd.Series:
    """Unix seconds -> naive local datetimes (what the frame caption shows, as clock time)."""
    stamps = pd.to_datetime(seconds, unit="s", utc=True)
    return stamps.dt.tz_convert(datetime.now().astimezone().tzinfo).dt.tz_localize(None)


TREND_COLUMNS = ["time", "nozzle", "angle_deg", "raw_deg", "spec_status", "segment"]
GAP_S = 5.0  # a longer pause in a nozzle's data (stream lost, daemon restarted) breaks its line


def segments(df: pd.DataFrame, group: str, gap_s: float = GAP_S) -> pd.Series:
    """Per row, a number that changes where its group's time series pauses longer than gap_s.

    Charts draw one line per (group, segment), so a pause is a gap, not a straight line.
    """
    if df.empty:
        return pd.Series(dtype="int64")
    ordered = df.sort_values("time")
    gaps = ordered.groupby(group)["time"].diff() > pd.Timedelta(seconds=gap_s)
    return gaps.astype(int).groupby(ordered[group]).cumsum().reindex(df.index)


def trend_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Measurement rows -> one row per placed nozzle and frame: time, 'Nozzle N', angles.

    angle_deg is the smoothed angle (the one the spec is checked on), raw_deg the frame's
    (empty where the reading was unreliable).
    """
    df = pd.DataFrame(list(rows))
    if df.empty or "nozzle_id" not in df:
        return pd.DataFrame(columns=TREND_COLUMNS)
    df = df[df["nozzle_id"].notna()].copy()
    df["time"] = local_times(df["time"])
    df["nozzle"] = "Nozzle " + df["nozzle_id"].astype(int).astype(str)
    raw = pd.to_numeric(df["included_angle_deg"], errors="coerce")
    if "unreliable" in df:  # an unreliable reading is no angle to draw
        raw = raw.where(df["unreliable"].fillna("") == "")
    df["angle_deg"] = pd.to_numeric(df["smoothed_angle_deg"], errors="coerce").fillna(raw)
    df["raw_deg"] = raw
    df["segment"] = segments(df, "nozzle")
    return df[TREND_COLUMNS].reset_index(drop=True)
