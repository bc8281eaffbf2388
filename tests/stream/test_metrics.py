"""Prometheus text format and percentiles."""

from __future__ import annotations

import pytest

from spraycv.stream.metrics import Histogram, Metrics


def test_render_counters_histograms_and_scrape_time_values() -> None:
    m = Metrics()
    m.describe("frames_total", "frames seen")
    m.inc("frames_total", labels={"source": "a"})
    m.inc("frames_total", 2, labels={"source": "a"})
    m.inc("frames_total", labels={"source": "b"})
    m.observe("latency_seconds", 0.02)
    m.observe("latency_seconds", 0.3)
    m.gauge("up", lambda: {(("source", "a"),): 1.0})
    text = m.render()
    assert "# HELP spraycv_frames_total frames seen" in text
    assert "# TYPE spraycv_frames_total counter" in text
    assert 'spraycv_frames_total{source="a"} 3' in text
    assert 'spraycv_latency_seconds_bucket{le="0.025"} 1' in text
    assert 'spraycv_latency_seconds_bucket{le="0.5"} 2' in text
    assert 'spraycv_latency_seconds_bucket{le="+Inf"} 2' in text
    assert "spraycv_latency_seconds_count 2" in text
    assert 'spraycv_up{source="a"} 1' in text
    assert m.counter_total("frames_total") == 4
    assert m.counter("frames_total", {"source": "b"}) == 1


@pytest.mark.parametrize(("q", "expected"), [(0, 1.0), (50, 50.0), (95, 95.0), (100, 100.0)])
def test_histogram_percentiles(q: float, expected: float) -> None:
    h = Histogram()
    for v in range(100, 0, -1):
        h.observe(float(v))
    assert h.percentile(q) == pytest.approx(expected, abs=1)


def test_histogram_memory_is_bounded() -> None:
    h = Histogram(keep=100)
    for v in range(10_000):
        h.observe(float(v))
    assert len(h._recent) <= 200
    assert h.n == 10_000
    assert h.percentile(0) >= 9_800  # percentiles cover the most recent values
