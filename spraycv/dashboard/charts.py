"""Altair charts: angle over time per nozzle, with the spec's tolerance band behind it."""

from __future__ import annotations

from collections.abc import Iterable

import altair as alt
import pandas as pd

BAND_COLOUR = "#1e8e3e"
# Line colours that are not a status colour (green, amber, red, grey mean ok/out/alarm/none).
SERIES_COLOURS = ["#1a73e8", "#9334e6", "#12a4b8", "#e52592", "#3949ab", "#8d6e63",
                  "#00796b", "#5e35b1"]  # fmt: skip
# Times are naive local clock times; a "utc" scale shows them as they are, whatever the
# browser's time zone (so the axis agrees with the frame caption).
TIME_AXIS = alt.X(
    "time:T",
    title=None,
    scale=alt.Scale(type="utc"),
    axis=alt.Axis(format="%H:%M:%S", labelFontSize=13, tickCount=6),
)


def angle_chart(
    df: pd.DataFrame,
    bands: Iterable[tuple[float, float]] = (),
    colour_by: str = "nozzle",
    height: int = 260,
) -> alt.LayerChart:
    """Lines of df['angle_deg'] over df['time'] per `colour_by`; one band per (nominal, tol)."""
    bands = sorted(set(bands))
    lines = (
        alt.Chart(df)
        .mark_line(strokeWidth=2.5)
        .encode(
            x=TIME_AXIS,
            y=alt.Y(
                "angle_deg:Q",
                title="deg",
                scale=alt.Scale(zero=False, domain=_y_domain(df, bands)),
                axis=alt.Axis(labelFontSize=13, titleFontSize=13),
            ),
            color=alt.Color(
                f"{colour_by}:N",
                title=None,
                scale=alt.Scale(range=SERIES_COLOURS),
                legend=alt.Legend(orient="top", labelFontSize=14, symbolStrokeWidth=4),
            ),
            detail="segment:N",  # one line per uninterrupted stretch
            tooltip=[
                alt.Tooltip("time:T", format="%H:%M:%S", title="time"),
                alt.Tooltip(f"{colour_by}:N"),
                alt.Tooltip("angle_deg:Q", format=".1f", title="angle"),
            ],
        )
    )
    layers: list[alt.Chart] = []
    if bands:
        frame = pd.DataFrame(
            [{"low": n - t, "high": n + t, "nominal": n} for n, t in bands]
        )  # fmt: skip
        layers.append(
            alt.Chart(frame)
            .mark_rect(color=BAND_COLOUR, opacity=0.12)
            .encode(y="low:Q", y2="high:Q")
        )
        layers.append(
            alt.Chart(frame)
            .mark_rule(color=BAND_COLOUR, strokeDash=[6, 4], opacity=0.7)
            .encode(y="nominal:Q")
        )
    return alt.layer(*layers, lines).properties(height=height)


def _y_domain(
    df: pd.DataFrame, bands: list[tuple[float, float]]
) -> list[float] | alt.UndefinedType:
    """Room for the data and the whole band, so a drift out of the band is plain to see."""
    values = pd.to_numeric(df["angle_deg"], errors="coerce").dropna() if len(df) else pd.Series()
    lows = [n - t for n, t in bands] + ([values.min()] if len(values) else [])
    highs = [n + t for n, t in bands] + ([values.max()] if len(values) else [])
    if not lows:
        return alt.Undefined
    low, high = min(lows), max(highs)
    pad = max(1.0, 0.15 * (high - low))
    return [float(low - pad), float(high + pad)]


def downsample(df: pd.DataFrame, group: str, max_points: int = 4000) -> pd.DataFrame:
    """At most about max_points rows for plotting: per group, the median per time bucket.

    A week of 5 fps measurements is millions of points; the browser needs a few thousand.
    """
    if len(df) <= max_points or df.empty:
        return df
    groups = max(1, df[group].nunique())
    span = (df["time"].max() - df["time"].min()).total_seconds()
    bucket = max(1.0, span * groups / max_points)
    out = (
        df.set_index("time")
        .groupby([group, "segment"])["angle_deg"]
        .resample(pd.Timedelta(seconds=bucket))
        .median()
        .dropna()  # empty buckets (pauses) stay gaps
        .reset_index()
    )
    return out
