"""Models: the backend in use, the leaderboard and the model card of the shipped weights."""

from __future__ import annotations

import streamlit as st

from spraycv.dashboard import models, ui
from spraycv.dashboard.client import DaemonError
from spraycv.dashboard.settings import load_settings

settings = load_settings()
ui.style_page()
conn = ui.connect(settings)
st.header("Models")

st.subheader("In use")
try:
    if conn.client is None:
        raise DaemonError(conn.error or "no daemon")
    health = conn.client.health()
    model, backend = st.columns(2)
    model.metric("model", str(health.get("model", "?")).split(" (")[0])
    backend.metric("backend", str(health.get("backend", "?")))
    st.caption(f"reported by {conn.label} (/health)")
except DaemonError as exc:
    st.warning(f"backend unknown: {exc}")

st.subheader("Leaderboard")
try:
    st.dataframe(models.leaderboard(), hide_index=True, key="models_leaderboard")
except OSError as exc:
    st.warning(f"no leaderboard: {exc}")
note = models.selection_note()
if note:
    st.caption(note)

st.subheader("Model card")
card = models.model_card()
if card is None:
    st.warning(f"no model card at {models.MODEL_CARD}")
else:
    with st.container(border=True):
        st.markdown(card)
