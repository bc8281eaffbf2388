"""Counters and latency histograms of the daemon, in the Prometheus text format.

A few dozen lines instead of a dependency: the daemon only needs labelled counters, gauges
read at scrape time and fixed-bucket histograms.
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict
from collections.abc import Callable

Labels = tuple[tuple[str, str], ...]

LATENCY_BUCKETS_S = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _labels(labels: dict[str, str] | None) -> Labels:
    return tuple(sorted((labels or {}).items()))


def _fmt(name: str, labels: Labels, extra: tuple[tuple[str, str], ...] = ()) -> str:
    pairs = labels + extra
    if not pairs:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in pairs)
    return f"{name}{{{inner}}}"


class Histogram:
    """Cumulative-bucket histogram (seconds); also keeps the values for percentiles."""

    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS_S, keep: int = 10_000):
        self.buckets = buckets
        self.counts = [0] * (len(buckets) + 1)
        self.total = 0.0
        self.n = 0
        self._recent: list[float] = []
        self._keep = keep

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.total += value
        self.n += 1
        self._recent.append(value)
        if len(self._recent) > 2 * self._keep:  # amortised trim keeps memory bounded
            del self._recent[: -self._keep]

    def percentile(self, q: float) -> float | None:
        """q in [0, 100] over the most recent values, None when empty."""
        if not self._recent:
            return None
        values = sorted(self._recent[-self._keep :])
        return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


class Metrics:
    """Thread-safe labelled counters, histograms and scrape-time gauges."""

    def __init__(self, prefix: str = "spraycv"):
        self.prefix = prefix
        self._lock = threading.Lock()
        self._counters: dict[str, dict[Labels, float]] = defaultdict(dict)
        self._histograms: dict[str, dict[Labels, Histogram]] = defaultdict(dict)
        self._read_at_scrape: dict[str, tuple[str, Callable[[], dict[Labels, float]]]] = {}
        self._help: dict[str, str] = {}

    def describe(self, name: str, text: str) -> None:
        self._help[name] = text

    def inc(self, name: str, value: float = 1.0, labels: dict[str, str] | None = None) -> None:
        key = _labels(labels)
        with self._lock:
            series = self._counters[name]
            series[key] = series.get(key, 0.0) + value

    def observe(self, name: str, value: float, labels: dict[str, str] | None = None) -> None:
        key = _labels(labels)
        with self._lock:
            self._histograms[name].setdefault(key, Histogram()).observe(value)

    def gauge(
        self, name: str, read: Callable[[], dict[Labels, float]], kind: str = "gauge"
    ) -> None:
        """A value read when scraped: `read()` returns {labels: value}.

        kind "counter" for totals kept elsewhere (a reader's frame count, say).
        """
        self._read_at_scrape[name] = (kind, read)

    def counter(self, name: str, labels: dict[str, str] | None = None) -> float:
        """One counter series (0 when never incremented)."""
        with self._lock:
            return self._counters.get(name, {}).get(_labels(labels), 0.0)

    def counter_total(self, name: str) -> float:
        """A counter summed over its labels."""
        with self._lock:
            return sum(self._counters.get(name, {}).values())

    def percentile(self, name: str, q: float, labels: dict[str, str] | None = None) -> float | None:
        with self._lock:
            hist = self._histograms.get(name, {}).get(_labels(labels))
            return hist.percentile(q) if hist else None

    def render(self) -> str:
        """The Prometheus text exposition format (version 0.0.4)."""
        lines: list[str] = []
        with self._lock:
            for name, series in sorted(self._counters.items()):
                full = f"{self.prefix}_{name}"
                lines += self._header(full, name, "counter")
                lines += [f"{_fmt(full, k)} {v:g}" for k, v in sorted(series.items())]
            for name, series in sorted(self._histograms.items()):
                full = f"{self.prefix}_{name}"
                lines += self._header(full, name, "histogram")
                for k, h in sorted(series.items(), key=lambda kv: kv[0]):
                    running = 0
                    for bound, count in zip((*h.buckets, float("inf")), h.counts, strict=True):
                        running += count
                        le = "+Inf" if bound == float("inf") else f"{bound:g}"
                        lines.append(f"{_fmt(full + '_bucket', k, (('le', le),))} {running}")
                    lines.append(f"{_fmt(full + '_sum', k)} {h.total:g}")
                    lines.append(f"{_fmt(full + '_count', k)} {h.n}")
        for name, (kind, read) in sorted(self._read_at_scrape.items()):
            full = f"{self.prefix}_{name}"
            lines += self._header(full, name, kind)
            lines += [f"{_fmt(full, k)} {v:g}" for k, v in sorted(read().items())]
        return "\n".join(lines) + "\n"

    def _header(self, full: str, name: str, kind: str) -> list[str]:
        text = self._help.get(name)
        return ([f"# HELP {full} {text}"] if text else []) + [f"# TYPE {full} {kind}"]
