"""The fleet view's numbers: machines and sources with their last contact, and the newest
status of every nozzle of the fleet (read from a shared database: docs/fleet.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from spraycv.dashboard.live import local_times
from spraycv.stream.records import SpecStatus

OFFLINE_AFTER_S = 60.0  # no frame stored for this long: the source counts as offline
NOZZLE_WINDOW_S = 600.0  # nozzles read within this window are shown
ANY = "all"  # the filters' "no filter" choice


@dataclass(frozen=True)
class Choices:
    """What History's filters offer, each narrowed by the choices made before it."""

    sites: list[str]
    machines: list[str]
    sources: list[str]


def choices(origins: list[dict[str, Any]], site: str, machine: str) -> Choices:
    """Sites; machines of the chosen site; sources of the chosen machine (ANY: all)."""
    of_site = [o for o in origins if site == ANY or o["site"] == site]
    of_machine = [o for o in of_site if machine == ANY or o["machine"] == machine]
    return Choices(
        sorted({o["site"] for o in origins}),
        sorted({o["machine"] for o in of_site}),
        sorted({o["source"] for o in of_machine}),
    )


def chosen(value: str) -> str | None:
    return None if value == ANY else value


def machines_table(origins: list[dict[str, Any]], now: float) -> pd.DataFrame:
    """One row per (site, machine, source): last contact, seconds since, online or not."""
    cols = ["site", "machine", "source", "last contact", "seconds ago", "state"]
    if not origins:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(origins)
    df["last contact"] = local_times(df["last_time"])
    df["seconds ago"] = (now - df["last_time"]).round(0)
    df["state"] = ["online" if s <= OFFLINE_AFTER_S else "offline" for s in df["seconds ago"]]
    return df[cols]


def nozzles_table(status: list[dict[str, Any]]) -> pd.DataFrame:
    """The newest reading of each nozzle: where it is, its angle and its spec status."""
    cols = ["site", "machine", "source", "nozzle", "angle_deg", "status", "when"]
    if not status:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(status)
    df["nozzle"] = df["nozzle_id"].astype(int)
    df["angle_deg"] = df["smoothed_angle_deg"].fillna(df["included_angle_deg"]).round(1)
    df["status"] = df["spec_status"]
    df["when"] = local_times(df["time"])
    return df[cols]


def status_counts(nozzles: pd.DataFrame) -> dict[str, int]:
    """Nozzles per spec status, every status listed (zero where none)."""
    found = nozzles["status"].value_counts().to_dict() if len(nozzles) else {}
    return {s.value: int(found.get(s.value, 0)) for s in SpecStatus}
