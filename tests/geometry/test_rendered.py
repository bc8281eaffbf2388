"""The geometry on a few of the renderer's ground-truth masks (the full run is
benchmarks/geometry_accuracy.py)."""

from __future__ import annotations

import math

import pytest

from spraycv.geometry import MeasureHints, measure_cones
from spraycv.geometry.matching import angle_errors, match_to_truth

synth = pytest.importorskip("spraycv.data.synth")


@pytest.mark.parametrize("seed", [3, 14, 66, 303])
def test_rendered_masks_match_truth(seed: int) -> None:
    r = synth.render_sample(seed, size=512)
    truth = r.record["nozzles"]
    axis = tuple(truth[0]["axis"])
    for hints in (MeasureHints(axis=axis), None):
        meas = measure_cones(r.mask, hints)
        res = match_to_truth(meas, truth)
        assert res.missed == [] and res.extra == []
        for pair in res.pairs:
            err = angle_errors(meas[pair.meas], truth[pair.gt])
            assert math.isfinite(err["included"]) and abs(err["included"]) <= 1.5
            if hints is not None:
                assert abs(err["left"]) <= 1.5 and abs(err["right"]) <= 1.5
