"""The dashboard's plain functions, table-driven: cards, captions, alarms, trend, history,
settings (uploads: test_dashboard_uploads.py)."""

from __future__ import annotations

import csv
import io
import math
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from dashboard_support import SAMPLE_VIDEO, sample_images

from spraycv.config.daemon import DaemonConfig, SpecRule
from spraycv.dashboard import analyse, charts, history, live, models, settings
from spraycv.dashboard.embedded import DEMO_SPEC, SOURCE_NAME, embedded_config
from spraycv.dashboard.specs import SpecTable
from spraycv.dashboard.tables import csv_bytes

SAMPLE = sample_images()[0]


def nozzle(nid: int | None, raw: float | None, smoothed: float | None, status: str) -> dict:
    return {"nozzle_id": nid, "included_angle_deg": raw, "smoothed_angle_deg": smoothed,
            "spec_status": status}  # fmt: skip


def record(*nozzles: dict, frame_no: int = 7, t: float = 1_700_000_000.0) -> dict:
    return {"source": "cam0", "frame_no": frame_no, "time": t, "nozzles": list(nozzles)}


SPECS = SpecTable.from_config(
    DaemonConfig.model_validate(
        {
            "spec": {"nominal_deg": 110, "tolerance_deg": 5},
            "sources": [
                {"name": "cam0", "url": "x.mp4", "spec": {"nominal_deg": 55, "tolerance_deg": 5},
                 "nozzle_specs": {2: {"nominal_deg": 80, "tolerance_deg": 3}}},
                {"name": "cam1", "url": "y.mp4"},
            ],
        }
    )
)  # fmt: skip


@pytest.mark.parametrize(
    ("source", "nozzle_id", "expected"),
    [
        ("cam0", 0, (55, 5)),  # the source's rule
        ("cam0", 2, (80, 3)),  # the nozzle's own rule
        ("cam0", None, (55, 5)),
        ("cam1", 0, (110, 5)),  # the config's default
        ("unknown", 0, (110, 5)),
    ],
)
def test_spec_lookup_follows_the_daemon(source: str, nozzle_id: int | None, expected) -> None:
    rule = SPECS.rule(source, nozzle_id)
    assert rule is not None and (rule.nominal_deg, rule.tolerance_deg) == expected


def test_spec_bands_per_source() -> None:
    assert SPECS.source_rules("cam0") == {(55, 5), (80, 3)}
    assert SPECS.source_rules("cam1") == {(110, 5)}
    assert SpecTable().source_rules("cam0") == set()


@pytest.mark.parametrize(
    ("n", "value", "raw", "status_text", "colour"),
    [
        (nozzle(1, 54.96, 55.04, "ok"), "55.0°", "raw 55.0°", "OK", "#1e8e3e"),
        (nozzle(1, 61.2, 60.55, "out_of_spec"), "60.5°", "raw 61.2°", "OUT OF SPEC", "#f29900"),
        (nozzle(1, 70.0, 69.99, "alarm"), "70.0°", "raw 70.0°", "ALARM", "#d93025"),
        (nozzle(1, 50.0, None, "no_spec"), "50.0°", "raw 50.0°", "NO SPEC", "#80868b"),
        (nozzle(1, None, None, "not_measured"), "—", "raw —", "NOT MEASURED", "#80868b"),
        (nozzle(1, 50.0, 51.0, "bogus"), "51.0°", "raw 50.0°", "UNKNOWN", "#80868b"),
    ],
)
def test_card_shows_smoothed_angle_raw_and_status_colour(
    n: dict, value: str, raw: str, status_text: str, colour: str
) -> None:
    (card,) = live.nozzle_cards(record(n), SPECS)
    assert (card.label, card.value_text, card.raw_text) == ("Nozzle 1", value, raw)
    assert (card.style.text, card.style.colour) == (status_text, colour)
    assert card.spec_text == "spec 55 ± 5°" and card.frame_no == 7


def test_cards_sorted_by_nozzle_and_unplaced_counted() -> None:
    rec = record(nozzle(2, 80, 80, "ok"), nozzle(None, 50, None, "not_measured"),
                 nozzle(0, 55, 55, "ok"))  # fmt: skip
    cards = live.nozzle_cards(rec, SPECS)
    assert [c.nozzle_id for c in cards] == [0, 2]
    assert cards[1].spec_text == "spec 80 ± 3°"
    assert live.unplaced(rec) == 1
    assert live.nozzle_cards(record(nozzle(0, 1, 1, "ok")))[0].spec_text == "no spec"


def test_unreliable_reading_is_greyed_out_with_its_reason() -> None:
    """The daemon gives an unreliable frame no smoothed angle; the card shows the raw one
    greyed out, its reason in place of 'raw ...', and the grey unreliable pill."""
    n = {**nozzle(1, 57.3, None, "unreliable"),
         "unreliable": "low_edge_contrast;no_apex_support", "confidence": 0.2}  # fmt: skip
    (card,) = live.nozzle_cards(record(n), SPECS)
    assert card.raw_text == "unreliable: low edge contrast, no apex support"
    assert card.tint == "unreliable" and card.style.text == "UNRELIABLE"
    assert card.confidence == 0.2 and card.value_text == "57.3°"
    reliable = live.nozzle_cards(record({**nozzle(1, 55.0, 55.2, "ok"), "unreliable": ""}))[0]
    assert reliable.tint == "ok" and reliable.raw_text == "raw 55.0°"


def test_an_open_alarm_stays_red_on_the_pill_but_the_card_is_greyed() -> None:
    n = {**nozzle(0, 70.0, None, "alarm"), "unreliable": "low_edge_contrast"}
    (card,) = live.nozzle_cards(record(n), SPECS)
    assert card.style.text == "ALARM" and card.tint == "unreliable"


def spread(n: int, sd: float | None, rng: float, apex_sd: float, apex_rng: float) -> dict:
    return {"n": n, "angle_sd_deg": sd, "angle_range_deg": rng, "apex_sd_px": apex_sd,
            "apex_range_px": apex_rng}  # fmt: skip


@pytest.mark.parametrize(
    ("given", "text"),
    [
        ({"raw": spread(30, 2.93, 11.2, 3.14, 12.0), "smoothed": spread(30, 0.71, 2.1, 0.8, 2.5)},
         "last 30: SD 0.7°, range 2.1° · apex SD 0.8 px, range 2.5 px · raw SD 2.9°, "
         "apex 3.1 px"),
        ({"raw": spread(1, None, None, None, None), "smoothed": spread(1, None, None, None, None)},
         ""),  # one reading has no spread yet
        (None, ""),  # a plume without a nozzle id, or an older daemon
    ],
)  # fmt: skip
def test_card_shows_the_spread_of_the_last_readings(given: dict | None, text: str) -> None:
    (card,) = live.nozzle_cards(record({**nozzle(0, 55.0, 55.0, "ok"), "spread": given}))
    assert card.spread_text == text


@pytest.mark.parametrize("frame_no", [0, 1, 123, 987654])
def test_caption_round_trip(frame_no: int) -> None:
    rec = record(frame_no=frame_no)
    text = live.frame_caption(rec)
    assert text.startswith(f"cam0 · frame {frame_no} · ")
    assert live.parse_caption(text) == ("cam0", frame_no)
    assert live.parse_caption(text + " · picture may be a newer frame") == ("cam0", frame_no)


@pytest.mark.parametrize("text", ["", "frame 3", "cam0 frame 3", "Smoothed angle, last 2 min"])
def test_parse_caption_rejects_other_text(text: str) -> None:
    assert live.parse_caption(text) is None


def event(t: float, kind: str, nid: int | None = 1, source: str = "cam0") -> dict:
    return {"time": t, "source": source, "kind": kind, "nozzle_id": nid, "angle_deg": 61.0,
            "message": f"nozzle {nid}", "snapshot": None}  # fmt: skip


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([], []),
        ([event(1, "alarm_raised")], [("cam0", 1, 1)]),
        ([event(1, "alarm_raised"), event(2, "alarm_cleared")], []),
        ([event(1, "alarm_raised"), event(2, "alarm_cleared"), event(3, "alarm_raised")],
         [("cam0", 1, 3)]),
        # a clear of another nozzle or another source does not close it
        ([event(1, "alarm_raised"), event(2, "alarm_cleared", 2),
          event(3, "alarm_cleared", 1, "cam1")], [("cam0", 1, 1)]),
        ([event(5, "alarm_raised", 2), event(1, "source_lost", None), event(2, "alarm_raised")],
         [("cam0", 1, 2), ("cam0", 2, 5)]),
        # a camera too dark to trust is open until it is lit again, beside its nozzles'
        ([event(1, "under_exposed", None)], [("cam0", None, 1)]),
        ([event(1, "under_exposed", None), event(2, "alarm_raised"),
          event(3, "exposure_restored", None)], [("cam0", 1, 2)]),
    ],
)  # fmt: skip
def test_open_alarms(events: list[dict], expected: list[tuple]) -> None:
    got = live.open_alarms(events)
    assert [(a.source, a.nozzle_id, a.since) for a in got] == expected
    assert all(a.text.startswith("cam0 · nozzle") for a in got)


def row(t: float, nid: int | None = 0, smoothed: float | None = 55.0) -> dict:
    return {"time": t, "source": "cam0", "frame_no": int(t), "nozzle_id": nid,
            "included_angle_deg": 54.0, "smoothed_angle_deg": smoothed,
            "spec_status": "ok"}  # fmt: skip


def test_trend_buffer_fetches_incrementally_and_keeps_the_window() -> None:
    buffer = live.TrendBuffer(window_s=10)
    assert buffer.since(now=100) == 90
    buffer.add([row(95), row(96)], now=100)
    assert buffer.since(now=101) == 96  # from the newest row seen
    buffer.add([row(96), row(97)], now=101)  # the query is inclusive: 96 comes again
    assert [r["time"] for r in buffer.rows] == [95, 96, 97]
    buffer.add([row(108)], now=108)
    assert [r["time"] for r in buffer.rows] == [108]  # older than now - window: dropped


def test_trend_frame_draws_no_unreliable_raw_angle() -> None:
    rows = [{**row(0, smoothed=None), "unreliable": "low_edge_contrast"},
            {**row(1, smoothed=None), "unreliable": ""}]  # fmt: skip
    df = live.trend_frame(rows)
    assert df["angle_deg"].isna().tolist() == [True, False]
    assert df["raw_deg"].isna().tolist() == [True, False]


def test_trend_frame_uses_smoothed_then_raw_and_breaks_lines_at_pauses() -> None:
    rows = [row(0), row(1, smoothed=None), row(2, nid=None), row(20), row(1, nid=1)]
    df = live.trend_frame(rows)
    assert list(df.columns) == live.TREND_COLUMNS
    assert list(df["nozzle"]) == ["Nozzle 0", "Nozzle 0", "Nozzle 0", "Nozzle 1"]
    assert list(df["angle_deg"]) == [55.0, 54.0, 55.0, 55.0]
    assert list(df["segment"]) == [0, 0, 1, 0]  # the 19 s pause starts a new line
    assert live.trend_frame([]).empty


def test_angle_chart_has_band_only_with_a_spec() -> None:
    df = live.trend_frame([row(0), row(1)])
    with_band = charts.angle_chart(df, {(55.0, 5.0)}).to_dict()
    assert len(with_band["layer"]) == 3  # band, nominal line, data
    assert with_band["layer"][2]["encoding"]["y"]["scale"]["domain"][0] < 50
    assert len(charts.angle_chart(df).to_dict()["layer"]) == 1


def test_downsample_bounds_the_points_per_series() -> None:
    times = pd.date_range("2024-01-01", periods=20_000, freq="100ms")
    df = pd.DataFrame({"time": times, "series": ["a", "b"] * 10_000, "angle_deg": 55.0,
                       "segment": 0})  # fmt: skip
    small = charts.downsample(df, "series", max_points=1000)
    assert len(small) <= 1100 and set(small["series"]) == {"a", "b"}
    assert (small["angle_deg"] == 55.0).all()
    assert charts.downsample(df.head(10), "series") is not None


def test_measurement_table_and_csv() -> None:
    def fake_segmenter(image):  # one bright triangle-free mask: a measurement with no cone
        return (image[:, :, 0] > 250).astype("uint8")

    upload = analyse.load_sample(SAMPLE)
    results = analyse.analyse_upload(upload, fake_segmenter).results
    table = analyse.measurement_table(results)
    assert list(table.columns[:6]) == ["file", "frame", "index", "included_angle_deg",
                                       "unreliable", "confidence"]  # fmt: skip
    assert (table["file"] == SAMPLE.name).all() and table["frame"].isna().all()
    rows = list(csv.DictReader(io.StringIO(csv_bytes(table).decode())))
    assert len(rows) == len(table) and rows[0]["file"] == SAMPLE.name
    assert analyse.measurement_table([]).empty


def test_bundled_samples_are_the_images_and_the_video() -> None:
    names = [p.name for p in analyse.bundled_samples()]
    assert names[-1] == "video.mp4" and len(names) == len(sample_images()) + 1


@pytest.mark.parametrize(
    ("preset", "length"), [(k, v) for k, v in history.PRESETS.items() if v is not None]
)
def test_preset_ranges_end_now(preset: str, length: float, monkeypatch) -> None:
    monkeypatch.setattr(history, "now", lambda: 1_000_000.0)
    span = history.preset_range(preset)
    assert (span.since, span.until) == (1_000_000.0 - length, 1_000_000.0)


def test_custom_range_must_end_after_it_starts() -> None:
    a, b = datetime(2024, 5, 1, 14, 0), datetime(2024, 5, 1, 15, 0)
    assert history.custom_range(a, b).until - history.custom_range(a, b).since == 3600
    with pytest.raises(ValueError, match="after its start"):
        history.custom_range(b, a)
    with pytest.raises(ValueError):
        history.preset_range("Custom")


class FakeStore:
    """A HistorySource with fixed rows (what the StoreReader would return)."""

    def __init__(self, n: int):
        self.n = n

    def measurements(self, since=0.0, until=None, source=None, limit=10_000):
        return [row(float(i), nid=i % 2) | {"id": i} for i in range(min(self.n, limit))]

    def events(self, since=0.0, until=None, source=None, limit=10_000):
        return [event(1, "alarm_raised"), event(2, "source_lost", None)]


@pytest.mark.parametrize(("n", "limit", "truncated"), [(0, 100, False), (10, 100, False),
                                                       (100, 100, True)])  # fmt: skip
def test_load_history_counts(n: int, limit: int, truncated: bool) -> None:
    data = history.load_history(FakeStore(n), history.TimeRange(0, 10), None, limit)
    assert data.counts == {
        "measurements": n,
        "frames with spray": n,
        "events": 2,
        "alarms raised": 1,
    }
    assert data.truncated is truncated
    assert "id" not in data.measurements.columns
    series = history.angle_series(data.measurements)
    assert len(series) == n and set(series.columns) == {"time", "series", "angle_deg", "segment"}


def test_leaderboard_and_model_card() -> None:
    table = models.leaderboard()
    assert len(table) == len(pd.read_csv(models.LEADERBOARD_CSV))
    assert list(table.columns[:3]) == ["model", "kind", "angle MAE (deg)"]
    assert (models.selection_note() or "").startswith("Selected:")
    assert models.model_card() == models.MODEL_CARD.read_text()
    assert models.selection_note(Path("/nonexistent.md")) is None


@pytest.mark.parametrize(
    ("env", "field", "expected"),
    [
        ({}, "daemon_url", None),
        ({"SPRAYCV_DAEMON_URL": " http://h:1 "}, "daemon_url", "http://h:1"),
        ({"SPRAYCV_DASHBOARD_MAX_UPLOAD_MB": "5"}, "max_upload_bytes", 5 * 2**20),
        ({"SPRAYCV_DASHBOARD_MAX_UPLOAD_MB": "lots"}, "max_upload_mb", 100.0),
        ({"SPRAYCV_DASHBOARD_REFRESH_S": "0.01"}, "refresh_s", 0.5),  # clamped
        ({}, "refresh_s", 1.5),
    ],
)
def test_settings_from_env(env: dict, field: str, expected, monkeypatch) -> None:
    for name in ("SPRAYCV_DAEMON_URL", "SPRAYCV_DASHBOARD_MAX_UPLOAD_MB",
                 "SPRAYCV_DASHBOARD_REFRESH_S"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert getattr(settings.load_settings(), field) == expected


def test_embedded_config_is_the_demo(tmp_path: Path) -> None:
    cfg = embedded_config(tmp_path)
    (source,) = cfg.sources
    assert (source.name, source.url, source.loop) == (SOURCE_NAME, str(SAMPLE_VIDEO), True)
    assert cfg.spec == SpecRule(**DEMO_SPEC) and cfg.inference.threads == 1
    assert cfg.api.port == 0 and cfg.api.host == "127.0.0.1"
    assert cfg.store.path.parent == tmp_path


@pytest.mark.parametrize("value", [None, math.nan, math.inf])
def test_fmt_angle_missing(value) -> None:
    assert live.fmt_angle(value) == "—"


def test_analyse_with_a_calibration_gives_mm() -> None:
    import cv2

    from spraycv.geometry import MeasureHints

    mask_path = SAMPLE.parent.parent / "masks" / f"{SAMPLE.stem}.png"

    def label_mask(image):  # the renderer's exact mask of this sample
        return (cv2.imread(str(mask_path), cv2.IMREAD_GRAYSCALE) > 0).astype("uint8")

    hints = MeasureHints(mm_per_px=0.4, nozzle_height_mm=500.0)
    (result,) = analyse.analyse_upload(analyse.load_sample(SAMPLE), label_mask, hints=hints).results
    table = analyse.measurement_table([result])
    measured = table[table["included_angle_deg"].notna()]
    assert len(measured) >= 1
    assert measured["length_mm"].to_numpy() == pytest.approx(0.4 * measured["length_px"])
    half = measured["included_angle_deg"].map(math.radians) / 2
    assert measured["coverage_width_mm"].to_numpy() == pytest.approx(1000 * half.map(math.tan))


@pytest.mark.parametrize(
    ("length_mm", "coverage_mm", "text"),
    [
        (None, None, ""),
        (147.6, None, "length 148 mm"),
        (147.6, 1049.0, "length 148 mm · coverage 1.05 m"),
    ],
)
def test_card_shows_calibrated_lengths(length_mm, coverage_mm, text) -> None:
    record = {
        "source": "cam0",
        "frame_no": 3,
        "nozzles": [
            {"nozzle_id": 0, "smoothed_angle_deg": 110.0, "included_angle_deg": 111.0,
             "spec_status": "ok", "length_mm": length_mm, "coverage_width_mm": coverage_mm}
        ],
    }  # fmt: skip
    (card,) = live.nozzle_cards(record)
    assert card.calibrated_text == text


@pytest.mark.parametrize(
    ("readings", "text"),
    [
        ([], "no cone measured"),
        ([(56.4, ""), (61.0, "")], "56.4°, 61.0°"),
        ([(56.4, ""), (50.3, "no_apex_support")], "56.4°, 1 unreliable"),
        ([(50.3, "no_apex_support;apex_outside_image")], "1 unreliable"),
        ([(math.nan, "")], "no cone measured"),
    ],
)  # fmt: skip
def test_an_analysed_caption_gives_no_number_for_an_unreliable_reading(readings, text) -> None:
    from spraycv.geometry import ConeMeasurement

    cones = [ConeMeasurement(index=i, included_angle_deg=a, unreliable=u)
             for i, (a, u) in enumerate(readings)]  # fmt: skip
    analysed = analyse.Analysed("a.png", None, None, None, cones)
    assert analysed.angles_text == text
