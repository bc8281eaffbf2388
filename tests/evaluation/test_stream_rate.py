"""benchmarks/stream_rate.py: the daemon's two stages (the model on one thread, the reading of
the frame before on another) read a stream as one frame at a time does, in order; the
script prints every mode's rate."""

from __future__ import annotations

import re
import subprocess
import sys

import cv2
import pytest
from repo_scripts import REPO, load_script, script_path

from spraycv.measure import load_measurer
from spraycv.paths import SAMPLES_DIR, SHIPPED_MODEL


@pytest.fixture(scope="module")
def stream_rate():
    return load_script("stream_rate", "benchmarks")


def test_the_two_stages_read_every_frame_as_one_at_a_time_does_in_order(stream_rate):
    measurer = load_measurer(SHIPPED_MODEL, threads=1)
    images = [cv2.imread(str(p)) for p in sorted((SAMPLES_DIR / "images").glob("*.jpg"))]
    images = images + images[::-1]  # frames that differ from one to the next
    serial = stream_rate.one_at_a_time(measurer, images)
    staged = stream_rate.two_stages(measurer, images)
    assert len(staged) == len(images)
    assert stream_rate.angles(staged) == stream_rate.angles(serial)
    assert any(r.measurements for r in serial)


def test_prints_each_mode_s_rate():
    """Every mode's rate, frames in flight in two worker processes among them, and that they
    all read the same angles."""
    out = subprocess.run(
        [sys.executable, str(script_path("stream_rate", "benchmarks")), "--model",
         str(SHIPPED_MODEL), "--frames", "4", "--rounds", "1", "--threads", "2",
         "--processes", "2"],
        capture_output=True, text=True, check=True, cwd=REPO,
    ).stdout  # fmt: skip
    assert "4 frames of 3 nozzles" in out
    for mode in ("one at a time", "two stages (daemon)", "2 processes x 1 threads"):
        assert float(re.search(rf"\| {re.escape(mode)} \| ([\d.]+) \|", out).group(1)) > 0
    assert "every mode reads the same angles" in out
