"""Fleet: every machine and source with its last contact, every nozzle's newest status."""

from __future__ import annotations

import streamlit as st

from spraycv.dashboard import fleet, history, ui
from spraycv.dashboard.settings import load_settings
from spraycv.stream.store import StoreError

settings = load_settings()
ui.style_page()
st.header("Fleet")
if settings.db_url is None:
    st.info("start the dashboard with `spraycv dashboard --db postgresql://...` (or SPRAYCV_DB)")
    st.stop()
store = ui.get_store(settings.db_url)
now = history.now()
try:
    machines = fleet.machines_table(store.origins(), now)
    nozzles = fleet.nozzles_table(store.nozzle_status(now - fleet.NOZZLE_WINDOW_S))
except StoreError as exc:
    st.error(str(exc))
    st.stop()
st.session_state["fleet_shown"] = (machines, nozzles)  # for the tests

online = int((machines["state"] == "online").sum()) if len(machines) else 0
counts = {"machines": machines["machine"].nunique(), "sources online": online}
counts |= fleet.status_counts(nozzles)
for column, (name, value) in zip(st.columns(len(counts)), counts.items(), strict=True):
    column.metric(name, f"{value:,}")

st.subheader("Machines and sources")
st.dataframe(machines, hide_index=True, key="fleet_machines")
st.subheader(f"Nozzles (newest reading, last {fleet.NOZZLE_WINDOW_S / 60:g} min)")
if nozzles.empty:
    st.info("no nozzle measured in that window")
else:
    st.dataframe(nozzles, hide_index=True, key="fleet_nozzles")
