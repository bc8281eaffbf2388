"""The fleet dashboard under AppTest on a real PostgreSQL (the `postgres` fixture): Fleet
lists every machine and nozzle, History filters by site, machine, source and nozzle."""

from __future__ import annotations

import time

import pytest
from dashboard_support import HOME, page
from streamlit.testing.v1 import AppTest

from spraycv.dashboard import history
from spraycv.geometry import ConeMeasurement
from spraycv.stream.database import PostgresDatabase
from spraycv.stream.records import FrameRecord, NozzleRecord, SpecStatus
from spraycv.stream.store import Batch, Origin, RowFilter, StoreReader, prepare_schema

MACHINES = {"m1": "north", "m2": "north", "m3": "south"}  # machine -> site


def frame(t: float, frame_no: int, source: str) -> FrameRecord:
    nozzles = [
        NozzleRecord.from_measurement(
            ConeMeasurement(index=i, included_angle_deg=110.0 + i), time=t, source=source,
            frame_no=frame_no, nozzle_id=i, smoothed=110.0 + i, spec_status=SpecStatus.OK,
            model="m", backend="onnx",
        )
        for i in range(2)
    ]  # fmt: skip
    return FrameRecord(t, source, frame_no, 640, 480, 0.05, nozzles)


@pytest.fixture
def fleet_db(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Three machines' rows of the last minute, the dashboard's environment pointed at them."""
    db = PostgresDatabase(pg_url)
    prepare_schema(db)
    now = time.time()
    for machine, site in MACHINES.items():
        frames = [frame(now - 60 + i, i, "cam0") for i in range(30)]
        db.write(Batch.of(frames, Origin(site, machine)).statements())
    db.close()
    monkeypatch.setenv("SPRAYCV_DB", pg_url)
    monkeypatch.delenv("SPRAYCV_DAEMON_URL", raising=False)
    return pg_url


def run(script: str) -> AppTest:
    at = AppTest.from_file(script, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_fleet_page_lists_every_machine_and_nozzle(fleet_db: str) -> None:
    at = run(HOME)  # with a fleet database, Fleet is the first page
    machines, nozzles = at.session_state["fleet_shown"]
    assert sorted(machines["machine"]) == sorted(MACHINES)
    assert set(machines["state"]) == {"online"}
    assert len(nozzles) == 2 * len(MACHINES)
    assert {m.label: m.value for m in at.metric}["ok"] == str(2 * len(MACHINES))


def test_history_shows_all_machines_and_filters_them(fleet_db: str) -> None:
    at = run(page("2_History"))
    since, until, _ = at.session_state["history_query"]
    store = StoreReader(fleet_db)
    shown = at.session_state["history_filter"]
    assert shown == RowFilter()
    everything = store.measurements(since, until, None, history.MAX_ROWS)
    assert {r["machine"] for r in everything} == set(MACHINES)
    table = at.dataframe[0].value
    assert len(table) == len(everything) == 3 * 30 * 2
    at.selectbox(key="history_site").set_value("north").run()
    assert at.selectbox(key="history_machine").options == ["all", "m1", "m2"]
    at.selectbox(key="history_machine").set_value("m2").run()
    at.selectbox(key="history_nozzle").set_value(1).run()
    assert at.session_state["history_filter"] == RowFilter("north", "m2", 1)
    table = at.dataframe[0].value
    assert len(table) == 30
    assert set(table["machine"]) == {"m2"} and set(table["nozzle_id"]) == {1}
