"""Every page under streamlit.testing's AppTest, against a real daemon: no exception, the
expected elements, and the numbers shown equal what the package computes for that input."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import pandas as pd
import pytest
from dashboard_support import HOME, LiveDaemon, page, sample_images, wait_for
from streamlit.testing.v1 import AppTest

from spraycv.config.daemon import ApiConfig
from spraycv.dashboard import history, live, models, ui
from spraycv.dashboard.client import DaemonClient
from spraycv.measure import measure_image
from spraycv.stream.api import ApiServer
from spraycv.stream.records import Event, EventKind

TIMEOUT = 60  # the first run loads the model


def run(script: str) -> AppTest:
    at = AppTest.from_file(script, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def shown_caption(at: AppTest) -> tuple[str, int]:
    found = [live.parse_caption(c.value) for c in at.caption]
    found = [f for f in found if f is not None]
    assert len(found) == 1, [c.value for c in at.caption]
    return found[0]


def angle(n: dict) -> float | None:
    """The big number of a card: smoothed, raw before smoothing has a value."""
    smoothed = n["smoothed_angle_deg"]
    return smoothed if smoothed is not None else n["included_angle_deg"]


# -- Live ---------------------------------------------------------------------------------
def test_live_shows_the_daemons_latest_frame(dashboard_env: LiveDaemon) -> None:
    at = run(HOME)
    source, frame_no = shown_caption(at)
    record = at.session_state["live_shown"][source]  # the /latest record the page drew
    assert (source, frame_no) == ("cam0", record["frame_no"])
    placed = [n for n in record["nozzles"] if n["nozzle_id"] is not None]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {f"Nozzle {n['nozzle_id']}": live.fmt_angle(angle(n)) for n in placed}
    assert {m.proto.delta for m in at.metric} == {
        f"unreliable: {live.reasons_text(n['unreliable'])}"
        if n["unreliable"]
        else f"raw {live.fmt_angle(n['included_angle_deg'])}"
        for n in placed
    }
    # and that record is what the daemon stored for the frame number shown
    wait_for(lambda: dashboard_env.store.frame_measurements(source, frame_no), 10, "the frame")
    stored = dashboard_env.store.frame_measurements(source, frame_no)
    assert [(r["nozzle_id"], r["smoothed_angle_deg"], r["included_angle_deg"], r["spec_status"])
            for r in stored if r["nozzle_id"] is not None] == [
        (n["nozzle_id"], n["smoothed_angle_deg"], n["included_angle_deg"], n["spec_status"])
        for n in sorted(placed, key=lambda n: n["nozzle_id"])
    ]  # fmt: skip
    # the status pill of each card says the stored status; nozzle 0 breaks its 40 +- 2 spec
    pills = [m.value for m in at.markdown if "sc-pill" in m.value]
    assert len(pills) == len(placed)
    assert any(s in pills[0] for s in ("ALARM", "OUT OF SPEC"))
    assert "spec 40 ± 2°" in pills[0] and "spec 55 ± 5°" in pills[1]
    assert len(at.get("image")) == 1
    assert len(at.get("vega_lite_chart")) == 1  # the trend
    # the open alarm of nozzle 0, from /events since the daemon started
    assert any("ALARM" in e.value and "nozzle 0" in e.value for e in at.error)


def test_live_refresh_moves_on(dashboard_env: LiveDaemon) -> None:
    at = run(HOME)
    first = shown_caption(at)[1]
    newest = dashboard_env.daemon.latest
    wait_for(lambda: newest()["cam0"]["frame_no"] > first, 10, "the daemon's next frame")
    at.run()
    assert not at.exception and shown_caption(at)[1] > first


@pytest.mark.parametrize(("token", "shows"), [("s3cret", True), (None, False), ("nope", False)])
def test_live_token_from_env_never_reaches_the_browser(
    token: str | None, shows: bool, dashboard_env: LiveDaemon, monkeypatch
) -> None:
    server = ApiServer(dashboard_env.daemon, ApiConfig(port=0, token="s3cret"))
    server.start()
    try:
        monkeypatch.setenv("SPRAYCV_DAEMON_URL", server.url)
        if token:
            monkeypatch.setenv("SPRAYCV_DAEMON_TOKEN", token)
        at = run(HOME)
    finally:
        server.stop()
    assert at.text_input(key="daemon_token").value == ""  # widget values go to the browser
    assert bool(at.metric) is shows
    assert shows or any("HTTP 401" in e.value for e in at.error)


def test_live_without_spec_file_warns_and_still_measures(
    dashboard_env: LiveDaemon, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SPRAYCV_DAEMON_CONFIG", str(tmp_path / "missing.yaml"))
    at = run(HOME)
    assert any("No spec bands" in w.value for w in at.warning)
    assert at.metric and all("no spec" in m.value for m in at.markdown if "sc-pill" in m.value)


def test_live_unreachable_daemon_is_an_error_not_a_traceback(
    monkeypatch, refused_port: int
) -> None:
    monkeypatch.setenv("SPRAYCV_DAEMON_URL", f"http://127.0.0.1:{refused_port}")
    at = run(HOME)
    assert any("cannot reach the spraycv daemon" in e.value for e in at.error)
    assert not at.metric


def test_live_embedded_daemon_needs_no_configuration(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SPRAYCV_DAEMON_URL", raising=False)
    monkeypatch.delenv("SPRAYCV_DAEMON_CONFIG", raising=False)
    monkeypatch.setenv("SPRAYCV_DASHBOARD_DIR", str(tmp_path))
    try:
        at = run(HOME)
        # the first frame takes a moment: rerun the page until it shows one
        wait_for(lambda: at.metric or at.run().metric, 30, "the first frame", every=0.5)
        assert not at.exception
        assert shown_caption(at)[0] == "cam0"
        assert len(at.metric) == 3  # the sample video's three nozzles
        assert all("spec 55 ± 5°" in m.value for m in at.markdown if "sc-pill" in m.value)
        assert (tmp_path / "embedded.sqlite").is_file()
    finally:
        ui.get_embedded_daemon.clear()  # stops it (on_release)


# -- Analyse ------------------------------------------------------------------------------
def analyse_sample(name: str, frames: int | None = None) -> AppTest:
    at = run(page("1_Analyse"))
    at.segmented_control(key="analyse_mode").set_value("Bundled sample")
    if frames is not None:
        at.number_input(key="analyse_frames").set_value(frames)
    at.run()
    at.selectbox(key="analyse_sample").set_value(name).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("image", [p.name for p in sample_images()[:2]])
def test_analyse_sample_image_equals_measure_image(image: str, shipped_pipeline) -> None:
    at = analyse_sample(image)
    table = at.dataframe[0].value
    path = next(p for p in sample_images() if p.name == image)
    _, expected = measure_image(cv2.imread(str(path)), shipped_pipeline)  # peaks and refiner
    assert len(table) == len(expected) > 0
    assert list(table["file"]) == [image] * len(expected)
    for got, want in zip(table["included_angle_deg"], expected, strict=True):
        if want.ok:
            assert got == pytest.approx(want.included_angle_deg, abs=1e-6)
        else:
            assert got is None or math.isnan(got)
    assert len(at.get("download_button")) == 1
    assert len(at.get("image")) == 1 and not at.error


def test_analyse_checks_readings_against_a_spec(shipped_pipeline) -> None:
    """A nominal angle on the page: each reading's status and deviation beside its angle,
    as `spraycv measure --nominal-deg` gives them, and a summary that counts them."""
    image = sample_images()[0].name
    at = analyse_sample(image)
    assert "spec_status" not in at.dataframe[0].value.columns  # no check by default
    _, expected = measure_image(cv2.imread(str(sample_images()[0])), shipped_pipeline)
    nominal = round(next(m.included_angle_deg for m in expected if m.reliable))
    at.number_input(key="analyse_nominal").set_value(float(nominal))
    at.number_input(key="analyse_tolerance").set_value(2.0).run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert list(table.columns[3:7]) == ["included_angle_deg", "unreliable", "spec_status",
                                        "spec_deviation_deg"]  # fmt: skip
    for (_, row), m in zip(table.iterrows(), expected, strict=True):
        if m.unreliable:
            assert row["spec_status"] == "unreliable"
        elif not m.ok:
            assert row["spec_status"] == "not_measured"
        else:
            off = m.included_angle_deg - nominal
            assert row["spec_deviation_deg"] == pytest.approx(off, abs=1e-6)
            assert row["spec_status"] == ("out_of_spec" if abs(off) > 2.0 else "ok")
    ok = int((table["spec_status"] == "ok").sum())
    assert ok >= 1
    assert any(c.value.startswith(f"spec {nominal:g} +- 2 deg: {ok} ok") for c in at.caption)


def test_analyse_sample_video_samples_frames() -> None:
    at = analyse_sample("video.mp4", frames=2)
    table = at.dataframe[0].value
    assert sorted(set(table["frame"])) == [0, 35]  # first and last of 36
    assert len(at.get("image")) == 2


def test_analyse_upload_is_measured(shipped_pipeline) -> None:
    path = sample_images()[-1]
    at = run(page("1_Analyse"))
    at.file_uploader(key="analyse_files").set_value((path.name, path.read_bytes(), "image/jpeg"))
    at.run()
    assert not at.exception and not at.error
    expected = [m for m in measure_image(cv2.imread(str(path)), shipped_pipeline)[1] if m.ok]
    got = at.dataframe[0].value["included_angle_deg"].dropna()
    assert list(got) == pytest.approx([m.included_angle_deg for m in expected], abs=1e-6)


@pytest.mark.parametrize(
    ("name", "data", "limit_mb", "message"),
    [
        ("notes.txt", b"hello", None, "not an image or a video"),
        ("broken.jpg", b"\xff\xd8\xff\xe0 not really", None, "not a readable image"),
        ("clip.mp4", b"not a video", None, "not a readable video"),
        ("big.jpg", sample_images()[0].read_bytes(), "0.001", "over the upload limit"),
    ],
)
def test_analyse_bad_upload_is_a_clear_message(
    name: str, data: bytes, limit_mb: str | None, message: str, monkeypatch
) -> None:
    if limit_mb:
        monkeypatch.setenv("SPRAYCV_DASHBOARD_MAX_UPLOAD_MB", limit_mb)
    at = run(page("1_Analyse"))
    at.file_uploader(key="analyse_files").set_value((name, data, "application/octet-stream"))
    at.run()
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert not at.dataframe


# -- History ------------------------------------------------------------------------------
@pytest.mark.parametrize("origin", ["Daemon API", "SQLite file"])
@pytest.mark.parametrize("source", ["all", "cam0"])
def test_history_counts_equal_the_store(
    origin: str, source: str, dashboard_env: LiveDaemon, monkeypatch
) -> None:
    # end the range 3 s ago: every frame captured before then is committed by now
    store = dashboard_env.store
    wait_for(
        lambda: any(e["kind"] == "alarm_raised" for e in store.events(0, time.time() - 3.0)),
        10,
        "an alarm older than 3 s",
    )
    end = time.time() - 3.0
    monkeypatch.setattr(history, "now", lambda: end)
    at = run(page("2_History"))
    if origin == "SQLite file":
        at.segmented_control(key="history_origin").set_value(origin).run()
        at.text_input(key="history_db").set_value(str(dashboard_env.db)).run()
    at.selectbox(key="history_source").set_value(source).run()
    assert not at.exception and not at.error
    since, until, shown_source = at.session_state["history_query"]
    assert (until, shown_source) == (end, source)
    want_source = None if source == "all" else source
    rows = dashboard_env.store.measurements(since, until, want_source, history.MAX_ROWS)
    events = dashboard_env.store.events(since, until, want_source, history.MAX_ROWS)
    metrics = {m.label: int(m.value.replace(",", "")) for m in at.metric}
    assert metrics["measurements"] == len(rows) > 0
    assert metrics["events"] == len(events) > 0
    assert metrics["alarms raised"] == sum(e["kind"] == "alarm_raised" for e in events) >= 1
    measurements_table, events_table = (d.value for d in at.dataframe)  # the two tabs
    assert len(measurements_table) == len(rows)
    assert len(events_table) == len(events)
    assert len(at.get("download_button")) == 2
    assert len(at.get("vega_lite_chart")) == 1


def test_history_custom_range_must_be_ordered(dashboard_env: LiveDaemon) -> None:
    at = run(page("2_History"))
    at.selectbox(key="history_range").set_value("Custom").run()
    start = at.datetime_input(key="history_from").value
    at.datetime_input(key="history_to").set_value(start).run()
    assert not at.exception
    assert any("after its start" in e.value for e in at.error)


# -- Models -------------------------------------------------------------------------------
def test_models_shows_backend_leaderboard_and_card(dashboard_env: LiveDaemon) -> None:
    at = run(page("3_Models"))
    health = DaemonClient(dashboard_env.url).health()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["backend"] == health["backend"] == "onnxruntime"
    assert metrics["model"] == health["model"].split(" (")[0]
    board = at.dataframe[0].value
    assert len(board) == len(pd.read_csv(models.LEADERBOARD_CSV))
    assert any(models.MODEL_CARD.read_text().splitlines()[0][2:] in m.value for m in at.markdown)


@pytest.mark.parametrize(
    ("target", "header"),
    [("pages/1_Analyse.py", "Analyse"), ("pages/2_History.py", "History"),
     ("pages/3_Models.py", "Models")],
)  # fmt: skip
def test_navigation_reaches_every_page(target: str, header: str, dashboard_env) -> None:
    at = run(HOME)
    at.switch_page(target).run()
    assert not at.exception
    assert any(h.value.startswith(header) for h in at.header)


# -- No passwords shown -------------------------------------------------------------------
PASSWORD = "hunter2"


def shown_text(at: AppTest) -> str:
    """Everything a page sends to the browser (elements, tables, widget values) as text."""

    def walk(node: object) -> Iterator[object]:
        yield node
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    nodes = [n for block in (at.main, at.sidebar) for n in walk(block)]
    return "\n".join(str(n.proto) for n in nodes if getattr(n, "proto", None) is not None)


@pytest.mark.parametrize("origin", ["Daemon API", "SQLite file"])
def test_history_shows_no_url_password_even_from_the_database(
    origin: str, dashboard_env: LiveDaemon
) -> None:
    # an event that holds a camera URL with its password, as a row of an older spraycv
    message = f"stream up: rtsp://admin:{PASSWORD}@10.0.0.9/stream1"
    event = Event(time.time(), "cam0", EventKind.SOURCE_CONNECTED, message=message)
    dashboard_env.daemon.writer.put(event)
    wait_for(lambda: "admin:***@10.0.0.9" in str(dashboard_env.store.events()), 10, "the row")
    at = run(page("2_History"))
    if origin == "SQLite file":
        at.segmented_control(key="history_origin").set_value(origin).run()
        at.text_input(key="history_db").set_value(str(dashboard_env.db)).run()
    assert not at.exception and not at.error
    text = shown_text(at)
    assert PASSWORD not in text
    assert "rtsp://admin:***@10.0.0.9/stream1" in text  # the events table shows the row


@pytest.mark.parametrize("script", [HOME, page("2_History"), page("3_Models")])
def test_a_daemon_url_password_is_not_shown(
    script: str, dashboard_env: LiveDaemon, monkeypatch
) -> None:
    url = dashboard_env.url.replace("http://", f"http://admin:{PASSWORD}@")
    monkeypatch.setenv("SPRAYCV_DAEMON_URL", url)
    at = run(script)
    assert at.text_input(key="daemon_url").value == url.replace(PASSWORD, "***")
    assert PASSWORD not in shown_text(at)
