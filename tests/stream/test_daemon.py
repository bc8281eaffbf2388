"""The daemon in-process on real sources: files, a real MJPEG HTTP server, dead URLs."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest
from looks import counted_looks
from mjpeg_server import MjpegServer
from stream_helpers import SAMPLE_VIDEO, wait_for

from spraycv.measure import measure_image
from spraycv.stream.daemon import Daemon, DaemonStartError
from spraycv.stream.store import StoreReader


def get(url: str, token: str | None = None) -> tuple[int, bytes, str]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), response.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers["Content-Type"]


def inferred(daemon: Daemon, source: str | None = None) -> int:
    if source is None:
        return int(daemon.metrics.counter_total("frames_inferred_total"))
    return int(daemon.metrics.counter("frames_inferred_total", {"source": source}))


def test_every_inferred_frame_is_stored_with_the_geometry_of_that_frame(
    daemon_config, shipped_predictor, shipped_pipeline
) -> None:
    cfg = daemon_config([{"name": "demo", "url": str(SAMPLE_VIDEO)}])
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        wait_for(lambda: inferred(daemon) >= 8, what="8 inferred frames")
        latest = daemon.worker.get_latest("demo")
    finally:
        summary = daemon.stop()
    counts = StoreReader(cfg.store.path).counts()
    assert counts["frames"] == summary["frames_inferred"] == inferred(daemon) >= 8
    assert counts["measurements"] == summary["measurements_written"] > 0
    # the stored angles are those of the geometry on the model's mask (and apex peaks) of
    # that very frame
    _, expected = measure_image(latest.frame.image, shipped_pipeline, config=cfg.geometry)
    rows = StoreReader(cfg.store.path).frame_measurements("demo", latest.frame.number)
    got = sorted(r["included_angle_deg"] for r in rows if r["included_angle_deg"] is not None)
    want = sorted(m.included_angle_deg for m in expected if m.ok)
    assert got == pytest.approx(want, abs=1e-6)
    assert len(got) == 3  # the sample video shows three nozzles on a boom


def test_http_api(daemon_config, shipped_predictor) -> None:
    cfg = daemon_config([{"name": "demo", "url": str(SAMPLE_VIDEO)}])
    daemon = Daemon(cfg, shipped_predictor).start()
    base = daemon.api.url
    try:
        wait_for(lambda: daemon.store.counts()["measurements"] > 0, what="stored measurements")
        status, body, kind = get(f"{base}/health")
        health = json.loads(body)
        assert (status, health["status"], health["sources"]) == (200, "ok", {"demo": "connected"})
        status, body, _ = get(f"{base}/sources")
        assert json.loads(body)[0]["frames_read"] > 0
        latest = json.loads(get(f"{base}/latest?source=demo")[1])["demo"]
        assert {n["nozzle_id"] for n in latest["nozzles"]} == {0, 1, 2}
        # each nozzle comes with the spread of its recent readings, raw and smoothed
        spread = latest["nozzles"][0]["spread"]
        assert set(spread) == {"raw", "smoothed"} and spread["raw"]["n"] >= 0
        assert set(spread["raw"]) == {"n", "angle_sd_deg", "angle_range_deg", "apex_sd_px",
                                      "apex_range_px"}  # fmt: skip
        status, body, kind = get(f"{base}/frame/demo.jpg")
        image = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR)
        assert (status, kind, image.shape) == (200, "image/jpeg", (480, 640, 3))
        status, body, kind = get(f"{base}/metrics")
        assert kind.startswith("text/plain")
        assert 'spraycv_frames_inferred_total{source="demo"}' in body.decode()
        rows = json.loads(get(f"{base}/measurements?since=0&source=demo")[1])
        assert rows and all(r["source"] == "demo" for r in rows)
        assert get(f"{base}/events?since=0")[0] == 200
        assert get(f"{base}/measurements?since=yesterday")[0] == 400
        assert get(f"{base}/frame/nope.jpg")[0] == 404
        assert get(f"{base}/nope")[0] == 404
    finally:
        daemon.stop()


def test_bearer_token(daemon_config, shipped_predictor) -> None:
    cfg = daemon_config(
        [{"name": "demo", "url": str(SAMPLE_VIDEO)}], api={"port": 0, "token": "s3"}
    )
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        # /sources: /health may answer 503 until the first frame, whatever the token
        assert get(f"{daemon.api.url}/sources")[0] == 401
        assert get(f"{daemon.api.url}/sources", token="wrong")[0] == 401
        assert get(f"{daemon.api.url}/sources", token="s3")[0] == 200
    finally:
        daemon.stop()


def jpeg(shape: tuple[int, int], level: int) -> bytes:
    """A frame with one bright wedge, so the model has something to see."""
    h, w = shape
    image = np.full((h, w, 3), level, np.uint8)
    cv2.fillPoly(image, [np.array([[w // 2, h // 8], [w // 5, h - 10], [4 * w // 5, h - 10]])], 230)
    return cv2.imencode(".jpg", image)[1].tobytes()


def test_bad_sources_do_not_stop_the_others(
    daemon_config, shipped_predictor, refused_port: int
) -> None:
    big, small = jpeg((480, 640), 30), jpeg((240, 320), 30)

    def frames(i: int) -> bytes:  # corrupt frames, then a change of size mid-stream
        if i % 15 in (5, 6):
            return b"\xff\xd8 not a jpeg " + bytes(300)
        return small if i >= 30 else big

    server = MjpegServer(frames, fps=20)
    dead = f"http://127.0.0.1:{refused_port}/nothing.mjpg"
    cfg = daemon_config(
        [
            {"name": "demo", "url": str(SAMPLE_VIDEO)},
            {"name": "dead", "url": dead},
            {"name": "flaky", "url": server.url},
        ]
    )
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        wait_for(lambda: server.sent > 50, what="50 frames served")
        wait_for(lambda: daemon.readers["dead"].state.value == "failed", what="dead source failed")
        wait_for(lambda: inferred(daemon, "flaky") >= 5, what="inferred frames of flaky")
        wait_for(lambda: inferred(daemon, "demo") >= 5, what="inferred frames of demo")
        assert daemon.readers["flaky"].frames_bad >= 2
        assert daemon.readers["dead"].last_error
        assert inferred(daemon, "dead") == 0
    finally:
        summary = daemon.stop()
        server.close()
    assert StoreReader(cfg.store.path).counts()["frames"] == summary["frames_inferred"]


def test_new_resolution_after_a_reconnect(daemon_config, shipped_predictor) -> None:
    server = MjpegServer(lambda i: jpeg((480, 640), 40), fps=20)
    cfg = daemon_config([{"name": "cam", "url": server.url}])
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        wait_for(lambda: inferred(daemon) >= 3, what="frames at 640x480")
        server.restart(lambda i: jpeg((240, 320), 40))  # the camera reboots at 320x240
        wait_for(lambda: daemon.readers["cam"].size == (320, 240), what="320x240 frames")
        before = inferred(daemon)
        wait_for(lambda: inferred(daemon) >= before + 3, what="frames at 320x240")
    finally:
        daemon.stop()
        server.close()
    assert daemon.readers["cam"].reconnects >= 1
    store = StoreReader(cfg.store.path)
    sizes = {(f["width"], f["height"]) for f in store.frames()}
    kinds = [e["kind"] for e in store.events()]
    assert sizes == {(640, 480), (320, 240)}
    assert kinds[:3] == ["source_connected", "source_lost", "source_connected"]


def test_a_camera_turning_dark_raises_one_event_and_lit_again_ends_it(
    daemon_config, shipped_predictor
) -> None:
    """The lights go out on a camera: one under_exposed event (a warning: no plume there says
    nothing), and one exposure_restored when they come back."""
    lit = {"on": True}
    dark = np.full((240, 320, 3), 4, np.uint8)
    cv2.fillPoly(dark, [np.array([[160, 30], [64, 230], [256, 230]])], 30)
    dark_jpeg = cv2.imencode(".jpg", dark)[1].tobytes()
    server = MjpegServer(lambda i: jpeg((240, 320), 40) if lit["on"] else dark_jpeg, fps=20)
    cfg = daemon_config([{"name": "cam", "url": server.url}])
    daemon = Daemon(cfg, shipped_predictor).start()

    def exposure_events() -> list[str]:
        kinds = [e["kind"] for e in StoreReader(cfg.store.path).events()]
        return [k for k in kinds if k in ("under_exposed", "exposure_restored")]

    try:
        wait_for(lambda: inferred(daemon) >= 3, what="lit frames")
        lit["on"] = False
        wait_for(lambda: exposure_events() == ["under_exposed"], what="an under_exposed event")
        before = inferred(daemon)
        wait_for(lambda: inferred(daemon) >= before + 3, what="more dark frames")
        lit["on"] = True
        wait_for(lambda: len(exposure_events()) == 2, what="an exposure_restored event")
    finally:
        daemon.stop()
        server.close()
    assert exposure_events() == ["under_exposed", "exposure_restored"]
    (event,) = [e for e in StoreReader(cfg.store.path).events() if e["kind"] == "under_exposed"]
    assert event["source"] == "cam" and "plumes may be missed" in event["message"]


def test_a_covered_or_saturated_camera_raises_one_flat_frames_event(
    daemon_config, shipped_predictor
) -> None:
    """The camera's frames turn flat white (sun on the sensor, a wet lens): one flat_frames
    event (no plume there does not mean no spray), and one exposure_restored after."""
    flat = {"on": False}
    white = cv2.imencode(".jpg", np.full((240, 320, 3), 255, np.uint8))[1].tobytes()
    server = MjpegServer(lambda i: white if flat["on"] else jpeg((240, 320), 40), fps=20)
    cfg = daemon_config([{"name": "cam", "url": server.url}])
    daemon = Daemon(cfg, shipped_predictor).start()

    def exposure_events() -> list[dict]:
        kinds = ("under_exposed", "flat_frames", "exposure_restored")
        return [e for e in StoreReader(cfg.store.path).events() if e["kind"] in kinds]

    try:
        wait_for(lambda: inferred(daemon) >= 3, what="frames of a scene")
        flat["on"] = True
        wait_for(lambda: len(exposure_events()) == 1, what="a flat_frames event")
        flat["on"] = False
        wait_for(lambda: len(exposure_events()) == 2, what="an exposure_restored event")
    finally:
        daemon.stop()
        server.close()
    events = exposure_events()
    assert [e["kind"] for e in events] == ["flat_frames", "exposure_restored"]
    assert events[0]["source"] == "cam" and "check the camera" in events[0]["message"]


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ("missing.safetensors", "failed to load"),
        ("garbage.onnx", "failed to load"),
        ("model.txt", "no backend for suffix"),
    ],
)
def test_a_model_that_fails_to_load_leaves_no_database(daemon_config, tmp_path, weights, message):
    (tmp_path / "garbage.onnx").write_bytes(b"not an onnx file")
    (tmp_path / "model.txt").write_text("x")
    cfg = daemon_config(
        [{"name": "demo", "url": str(SAMPLE_VIDEO)}], inference={"weights": str(tmp_path / weights)}
    )
    with pytest.raises(DaemonStartError, match=message):
        Daemon(cfg)
    assert not cfg.store.path.exists()  # the model is checked before the database is made


def test_an_unwritable_database_is_a_start_error(daemon_config, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    cfg = daemon_config(
        [{"name": "demo", "url": str(SAMPLE_VIDEO)}], store={"path": str(tmp_path / "file" / "db")}
    )
    with pytest.raises(DaemonStartError, match="cannot create the database folder"):
        Daemon(cfg)


def test_no_sources_is_a_start_error(daemon_config) -> None:
    with pytest.raises(DaemonStartError, match="no sources"):
        Daemon(daemon_config([]))


def test_sources_report_their_spec_rules(daemon_config, shipped_predictor) -> None:
    cfg = daemon_config(
        [
            {
                "name": "demo",
                "url": str(SAMPLE_VIDEO),
                "nozzle_specs": {1: {"nominal_deg": 60, "tolerance_deg": 3}},
            }
        ],
        spec={"nominal_deg": 55, "tolerance_deg": 5},
    )
    daemon = Daemon(cfg, shipped_predictor)  # not started: the status needs no frames
    (status,) = daemon.sources_status()
    assert status["spec"] == {"nominal_deg": 55.0, "tolerance_deg": 5.0}
    assert status["nozzle_specs"] == {"1": {"nominal_deg": 60.0, "tolerance_deg": 3.0}}
    daemon.stop()


def test_calibrated_sources_store_lengths_and_coverage_in_mm(daemon_config, shipped_predictor):
    scale, height = 0.5, 500.0
    cfg = daemon_config(
        [{"name": "demo", "url": str(SAMPLE_VIDEO), "mm_per_px": scale,
          "nozzle_height_mm": height, "nozzle_spacing_mm": 500.0}]
    )  # fmt: skip
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        wait_for(lambda: daemon.store.counts()["measurements"] >= 3, what="measurements")
    finally:
        daemon.stop()
    rows = [r for r in daemon.store.measurements() if r["included_angle_deg"] is not None]
    assert rows
    for r in rows:
        assert r["length_mm"] == pytest.approx(r["length_px"] * scale)
        assert r["area_mm2"] == pytest.approx(r["area_px"] * scale**2)
        half = np.radians(r["included_angle_deg"]) / 2
        assert r["coverage_width_mm"] == pytest.approx(2 * height * np.tan(half), rel=1e-6)


@pytest.mark.parametrize(("every_s", "idle"), [(3600.0, True), (0.0, False)])
def test_an_idle_camera_skips_the_search_of_empty_frames(
    daemon_config, shipped_predictor, no_spray_frame, every_s, idle, monkeypatch
) -> None:
    """A camera whose nozzles do not spray: its first frame is searched (a far view's sprays
    may show only in the tiled look, a spray seen side-on only in a turned one), the next
    ones within `idle_search_every_s` are not; with 0 every frame is."""
    calls = counted_looks(monkeypatch, shipped_predictor)
    data = cv2.imencode(".jpg", no_spray_frame, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    server = MjpegServer(lambda i: data, fps=20)
    cfg = daemon_config(
        [{"name": "idle", "url": server.url}], inference={"idle_search_every_s": every_s}
    )
    daemon = Daemon(cfg, shipped_predictor).start()
    try:
        wait_for(lambda: daemon.summary()["frames_inferred"] >= 4, what="4 idle frames")
    finally:
        summary = daemon.stop()
        server.close()
    stored = StoreReader(cfg.store.path).counts()["frames"]
    assert stored == summary["frames_inferred"] >= 4
    searched = 1 if idle else stored
    assert calls == {"tiled_look": searched, "turned_look": 3 * searched}
