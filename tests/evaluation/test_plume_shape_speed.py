"""benchmarks/plume_shape_speed.py: the redraw's cost beside the rest of the pipeline, run on
the bundled samples with the shipped model."""

from __future__ import annotations

import re
import subprocess
import sys

from repo_scripts import REPO, script_path


def test_prints_the_redraw_and_the_rest_in_ms():
    out = subprocess.run(
        [sys.executable, str(script_path("plume_shape_speed", "benchmarks")), "--data",
         str(REPO / "data" / "samples"), "--n", "2", "--rounds", "1"],
        capture_output=True, text=True, check=True, cwd=REPO,
    ).stdout  # fmt: skip
    assert "2 frames" in out
    redraw, rest = map(float, re.search(r"redraw ([\d.]+) ms .* ([\d.]+) ms", out).groups())
    assert redraw > 0 and rest > 0
    assert re.search(r"adds [\d.]+ % to the pipeline", out)
