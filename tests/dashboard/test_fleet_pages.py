"""The fleet dashboard under AppTest on a real PostgreSQL (the `postgres` fixture): Fleet
lists every machine and nozzle, History filters by site, machine, source and nozzle."""

from __future__ import annotations

from dashboard_support import FLEET_MACHINES, HOME, page
from streamlit.testing.v1 import AppTest

from spraycv.dashboard import history
from spraycv.stream.store import RowFilter, StoreReader


def run(script: str) -> AppTest:
    at = AppTest.from_file(script, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_fleet_page_lists_every_machine_and_nozzle(fleet_db: str) -> None:
    at = run(HOME)  # with a fleet database, Fleet is the first page
    machines, nozzles = at.session_state["fleet_shown"]
    assert sorted(machines["machine"]) == sorted(FLEET_MACHINES)
    assert set(machines["state"]) == {"online"}
    assert len(nozzles) == 2 * len(FLEET_MACHINES)
    assert {m.label: m.value for m in at.metric}["ok"] == str(2 * len(FLEET_MACHINES))


def test_history_shows_all_machines_and_filters_them(fleet_db: str) -> None:
    at = run(page("2_History"))
    since, until, _ = at.session_state["history_query"]
    store = StoreReader(fleet_db)
    shown = at.session_state["history_filter"]
    assert shown == RowFilter()
    everything = store.measurements(since, until, None, history.MAX_ROWS)
    assert {r["machine"] for r in everything} == set(FLEET_MACHINES)
    table = at.dataframe[0].value
    assert len(table) == len(everything) == 3 * 30 * 2
    assert {m.label: m.value for m in at.metric}["frames with spray"] == str(3 * 30)
    at.selectbox(key="history_site").set_value("north").run()
    assert at.selectbox(key="history_machine").options == ["all", "m1", "m2"]
    at.selectbox(key="history_machine").set_value("m2").run()
    at.selectbox(key="history_nozzle").set_value(1).run()
    assert at.session_state["history_filter"] == RowFilter("north", "m2", 1)
    table = at.dataframe[0].value
    assert len(table) == 30
    assert set(table["machine"]) == {"m2"} and set(table["nozzle_id"]) == {1}
