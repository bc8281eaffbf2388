"""Live: open alarms, the newest annotated frame per source, a card per nozzle, the trend."""

from __future__ import annotations

import time

import streamlit as st

from spraycv.dashboard import charts, live, ui
from spraycv.dashboard.client import DaemonClient, DaemonError
from spraycv.dashboard.settings import load_settings
from spraycv.dashboard.specs import SpecTable

settings = load_settings()
ui.style_page()
conn = ui.connect(settings)
with st.sidebar:
    window_min = st.select_slider(
        "Trend window", options=[1, 2, 5, 10, 15], value=2, key="trend_window",
        format_func=lambda m: f"{m} min",
    )  # fmt: skip
if conn.client is None:
    st.error(conn.error or "no daemon")
    st.stop()
conn.show_warning()


def trend_rows(client: DaemonClient, source: str, window_s: float) -> list[dict]:
    """The source's recent rows, fetched incrementally into a per-session buffer."""
    buffers = st.session_state.setdefault("trend_buffers", {})
    key = (client.url, source, window_s)
    buffer = buffers.setdefault(key, live.TrendBuffer(window_s))
    now = time.time()
    buffer.add(client.measurements(buffer.since(now), None, source, 50_000), now)
    return buffer.rows


def show_source(client: DaemonClient, source: str, specs: SpecTable, window_s: float) -> None:
    snap = client.snapshot(source)
    if snap is None:
        st.info(f"{source}: waiting for the first measured frame…")
        return
    cards = live.nozzle_cards(snap.record, specs)
    shown = st.session_state.setdefault("live_shown", {})
    shown[source] = snap.record  # what the numbers on screen are (tests compare them)
    picture, numbers = st.columns([3, 2], gap="medium")
    with picture:
        if snap.jpeg is not None:
            st.image(snap.jpeg, width="stretch")
        note = "" if snap.consistent else " · picture may be a newer frame"
        st.caption(live.frame_caption(snap.record) + note)
    with numbers:
        st.caption("Included angle: smoothed (checked against the spec); raw: this frame")
        if not cards:
            st.info("no spray cone in this frame")
        per_row = 1 if len(cards) <= 4 else 2
        for start in range(0, len(cards), per_row):
            for column, card in zip(
                st.columns(per_row), cards[start : start + per_row], strict=False
            ):
                with column:
                    ui.nozzle_card(card)
        if live.unplaced(snap.record):
            st.caption(f"{live.unplaced(snap.record)} plume(s) without a nozzle id")
    trend = live.trend_frame(trend_rows(client, source, window_s))
    if len(trend):
        st.caption(f"Smoothed angle, last {window_s / 60:g} min · band: spec ± tolerance")
        st.altair_chart(charts.angle_chart(trend, specs.source_rules(source)), width="stretch")


@st.fragment(run_every=settings.refresh_s)
def live_view(client: DaemonClient, label: str, specs: SpecTable, window_s: float) -> None:
    try:
        health = client.health()
        started = time.time() - float(health.get("uptime_s", 0.0))
        alarms = live.open_alarms(client.events(since=started, limit=100_000))
    except DaemonError as exc:
        st.error(str(exc))
        return
    state = ":green[●] streaming" if health.get("streaming") else ":red[●] no stream connected"
    st.caption(
        f"{state} · model {health.get('model')} · {label} · updated {live.clock(time.time())}"
    )
    for alarm in alarms:
        st.error(f"**ALARM** · {alarm.text}", icon=":material/warning:")
    for source in health.get("sources", {}):
        try:
            show_source(client, source, specs, window_s)
        except DaemonError as exc:
            st.error(str(exc))


live_view(conn.client, conn.label, conn.specs, window_min * 60.0)
