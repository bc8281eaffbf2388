"""Tables for export."""

from __future__ import annotations

import io

import pandas as pd


def csv_bytes(df: pd.DataFrame) -> bytes:
    """UTF-8 CSV with a header and no index (what a spreadsheet opens)."""
    buffer = io.StringIO()
    df.to_csv(buffer, index=False)
    return buffer.getvalue().encode()
