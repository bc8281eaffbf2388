"""History: stored measurements and events by time range and source, plotted and exported."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import streamlit as st

from spraycv.dashboard import charts, history, ui
from spraycv.dashboard.client import DaemonError
from spraycv.dashboard.history import HistorySource
from spraycv.dashboard.settings import load_settings
from spraycv.dashboard.tables import csv_bytes
from spraycv.stream.store import StoreError, StoreReader

settings = load_settings()
ui.style_page()
conn = ui.connect(settings)
st.header("History")

where, when, which = st.columns([2, 2, 2])
with where:
    origin = st.segmented_control(
        "Read from", ["Daemon API", "SQLite file"], default="Daemon API", key="history_origin"
    )
reader: HistorySource | None = conn.client
if origin == "SQLite file":
    path = st.text_input(
        "Database", value=str(conn.db_path or ""), key="history_db",
        placeholder="outputs/daemon/spraycv.sqlite",
    ).strip()  # fmt: skip
    reader = StoreReader(Path(path)) if path else None
if reader is None:
    st.error(conn.error or "give the daemon URL or a database file")
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
    if isinstance(reader, StoreReader):
        names = reader.sources()
    else:
        names = [s["name"] for s in conn.client.sources()] if conn.client else []
    with which:
        source = st.selectbox("Source", ["all", *names], key="history_source")
    data = history.load_history(reader, span, None if source == "all" else source)
except (DaemonError, StoreError) as exc:
    st.error(str(exc))
    st.stop()
st.session_state["history_query"] = (span.since, span.until, source)  # for the tests

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
