"""History: stored measurements and events by time range and source, plotted and exported."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import streamlit as st

from spraycv.dashboard import charts, fleet, history, ui
from spraycv.dashboard.client import DaemonError
from spraycv.dashboard.history import HistorySource
from spraycv.dashboard.settings import load_settings
from spraycv.dashboard.tables import csv_bytes
from spraycv.redact import redact_credentials
from spraycv.stream.store import RowFilter, StoreError, StoreReader


def fleet_filters(store: StoreReader, since: float) -> tuple[StoreReader, str | None]:
    """Site, machine, source and nozzle pickers -> (the store narrowed to them, source)."""
    site_col, machine_col, source_col, nozzle_col = st.columns(4)
    origins = store.origins()
    site = site_col.selectbox("Site", [fleet.ANY, *fleet.choices(origins, fleet.ANY,
                              fleet.ANY).sites], key="history_site")  # fmt: skip
    offered = fleet.choices(origins, site, fleet.ANY)
    machine = machine_col.selectbox("Machine", [fleet.ANY, *offered.machines],
                                    key="history_machine")  # fmt: skip
    offered = fleet.choices(origins, site, machine)
    source = source_col.selectbox("Source", [fleet.ANY, *offered.sources], key="history_source")
    nozzle_ids = sorted({r["nozzle_id"] for r in store.nozzle_status(since)})
    nozzle = nozzle_col.selectbox("Nozzle", [fleet.ANY, *nozzle_ids], key="history_nozzle")
    where = RowFilter(fleet.chosen(site), fleet.chosen(machine),
                      None if nozzle == fleet.ANY else int(nozzle))  # fmt: skip
    return store.narrowed(where), fleet.chosen(source)


settings = load_settings()
ui.style_page()
conn = None if settings.fleet else ui.connect(settings)
st.header("History")

where, when, which = st.columns([2, 2, 2])
reader: HistorySource | None = conn.client if conn else None
if settings.db_url is not None:
    where.caption(f"Fleet database: {redact_credentials(settings.db_url)}")
    origin = "Fleet database"
    reader = ui.get_store(settings.db_url)
else:
    with where:
        origin = st.segmented_control(
            "Read from", ["Daemon API", "SQLite file"], default="Daemon API",
            key="history_origin",
        )  # fmt: skip
if origin == "SQLite file" and conn is not None:
    path = st.text_input(
        "Database", value=str(conn.db_path or ""), key="history_db",
        placeholder="outputs/daemon/spraycv.sqlite",
    ).strip()  # fmt: skip
    reader = StoreReader(Path(path)) if path else None
if reader is None:
    st.error((conn and conn.error) or "give the daemon URL or a database file")
    st.stop()

with when:
    preset = st.selectbox("Range", list(history.PRESETS), index=1, key="history_range")
if history.PRESETS[preset] is None:
    end = datetime.now().replace(second=0, microsecond=0) + timedelta(minutes=1)
    start_col, end_col = st.columns(2)
    start = start_col.datetime_input("From", end - timedelta(hours=1), key="history_from")
    stop = end_col.datetime_input("To", end, key="history_to")
    try:
        span = history.custom_range(start, stop)
    except ValueError as exc:
        st.error(str(exc))
        st.stop()
else:
    span = history.preset_range(preset)

try:
    if origin == "Fleet database" and isinstance(reader, StoreReader):
        reader, chosen_source = fleet_filters(reader, span.since)
        source = chosen_source or "all"
    else:
        if isinstance(reader, StoreReader):
            names = reader.sources()
        else:
            names = [s["name"] for s in conn.client.sources()] if conn and conn.client else []
        with which:
            source = st.selectbox("Source", ["all", *names], key="history_source")
    data = history.load_history(reader, span, None if source == "all" else source)
except (DaemonError, StoreError) as exc:
    st.error(str(exc))
    st.stop()
st.session_state["history_query"] = (span.since, span.until, source)  # for the tests
if isinstance(reader, StoreReader):
    st.session_state["history_filter"] = reader.where

st.caption(span.text)
if data.truncated:
    st.warning(f"Only the first {history.MAX_ROWS:,} rows: narrow the range or pick a source.")
for column, (name, value) in zip(st.columns(4), data.counts.items(), strict=True):
    column.metric(name, f"{value:,}")

series = history.angle_series(data.measurements)
if len(series):
    plot = charts.downsample(series, "series")
    st.altair_chart(charts.angle_chart(plot, colour_by="series", height=320), width="stretch")

measurements_tab, events_tab = st.tabs(["Measurements", "Events"])
for tab, name, table in (
    (measurements_tab, "measurements", data.measurements),
    (events_tab, "events", data.events),
):
    with tab:
        if table.empty:
            st.info(f"no {name} in this range")
            continue
        st.dataframe(table, hide_index=True, key=f"history_{name}")
        st.download_button(
            f"Download {name} CSV", csv_bytes(table), file_name=f"spraycv_{name}.csv",
            mime="text/csv", key=f"history_{name}_csv",
        )  # fmt: skip
