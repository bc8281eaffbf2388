"""Helpers of the stream tests (a module of its own: `from conftest import` is ambiguous
when several test folders have a conftest)."""

from __future__ import annotations

from polling import wait_for, wait_settled  # noqa: F401  (re-exported for the tests here)

from spraycv.paths import SAMPLES_DIR

SAMPLE_VIDEO = SAMPLES_DIR / "video.mp4"
