"""Camera streams -> cone-angle measurements: readers, inference worker, store, API, daemon."""

from __future__ import annotations

from spraycv.stream.daemon import Daemon, DaemonStartError
from spraycv.stream.records import Event, EventKind, FrameRecord, NozzleRecord, SpecStatus
from spraycv.stream.store import StoreError, StoreReader

__all__ = [
    "Daemon",
    "DaemonStartError",
    "Event",
    "EventKind",
    "FrameRecord",
    "NozzleRecord",
    "SpecStatus",
    "StoreError",
    "StoreReader",
]
