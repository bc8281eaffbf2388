"""What the daemon writes: one record per inferred frame, per nozzle measurement, per event."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from spraycv.geometry import ConeMeasurement


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


@dataclass(frozen=True)
class NozzleRecord:
    """One nozzle in one frame (angles in degrees; None where not measured)."""

    time: float
    source: str
    frame_no: int
    nozzle_id: int | None  # stable along the boom; None when the plume could not be placed
    included_angle_deg: float | None
    smoothed_angle_deg: float | None
    half_angle_left_deg: float | None
    half_angle_right_deg: float | None
    tilt_deg: float | None
    length_px: float | None
    length_mm: float | None
    area_px: float | None
    area_mm2: float | None
    coverage_width_mm: float | None  # 2 h tan(angle / 2), with the rig's nozzle height
    overlap_mm: float | None  # with the neighbour (negative: a gap), with the spacing too
    apex_x: float | None
    apex_y: float | None
    flags: str
    spec_status: str  # "ok" | "out_of_spec" | "alarm" | "no_spec" | "not_measured"
    model: str
    backend: str

    @classmethod
    def from_measurement(
        cls,
        m: ConeMeasurement,
        *,
        time: float,
        source: str,
        frame_no: int,
        nozzle_id: int | None,
        smoothed: float | None,
        spec_status: str,
        model: str,
        backend: str,
    ) -> NozzleRecord:
        return cls(
            time=time,
            source=source,
            frame_no=frame_no,
            nozzle_id=nozzle_id,
            included_angle_deg=_finite(m.included_angle_deg),
            smoothed_angle_deg=_finite(smoothed),
            half_angle_left_deg=_finite(m.half_angle_left_deg),
            half_angle_right_deg=_finite(m.half_angle_right_deg),
            tilt_deg=_finite(m.tilt_deg),
            length_px=_finite(m.length_px),
            length_mm=_finite(m.length_mm),
            area_px=_finite(m.area_px),
            area_mm2=_finite(m.area_mm2),
            coverage_width_mm=_finite(m.coverage_width_mm),
            overlap_mm=_finite(m.overlap_mm),
            apex_x=_finite(m.apex[0]),
            apex_y=_finite(m.apex[1]),
            flags=";".join(f.value for f in m.flags),
            spec_status=spec_status,
            model=model,
            backend=backend,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FrameRecord:
    """One inferred frame and its nozzles (a frame with no spray has an empty list)."""

    time: float  # capture time
    source: str
    frame_no: int
    width: int
    height: int
    latency_s: float  # capture -> measurement
    nozzles: list[NozzleRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["nozzles"] = [n.to_dict() for n in self.nozzles]
        return out


@dataclass(frozen=True)
class Event:
    """Something an operator should know: alarm raised/cleared, source lost/back."""

    time: float
    source: str
    kind: str  # "alarm_raised" | "alarm_cleared" | "source_lost" | "source_connected"
    nozzle_id: int | None = None
    angle_deg: float | None = None
    message: str = ""
    snapshot: str | None = None  # path of the annotated frame saved with an alarm

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
