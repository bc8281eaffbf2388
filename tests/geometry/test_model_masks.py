"""Real model masks the outline alone misreads, read from the apex head's sure peaks.

The fixtures are the shipped model's masks and apex-head peaks of rendered frames whose truth
is known (fixtures/model_masks.json says where they come from). In each, the head marks the
nozzles within a few px, yet the outline's best wedge runs to a far corner:
- a lit bracket merged next to a wide cone's apex, and a 148 deg fan: read only with a wedge
  held at the sure peak (`fit_pinned`);
- two wide cones merged on a boom near their apexes, where the neighbour hides one side of
  a plume: read at the likely apexes with the parts that stay there (`read_at_likely`); the
  refiner then reads the angle on the image, and recovers the hidden plume from its peak;
- a clogged cone tilted from its boom's axis: refitted along that axis, its apex ran off the
  head's sure peak, so the boom keeps it as its own outline read it (`boom._on_boom`).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from spraycv.geometry import QualityFlag, measure_cones
from spraycv.measure import with_apex_prior

FIXTURES = Path(__file__).parent / "fixtures"
CASES = {c["mask"]: c for c in json.loads((FIXTURES / "model_masks.json").read_text())["cases"]}
# (mask, index of the true nozzle that must be read, apex tolerance px, angle tolerance deg or
# None): the coarse angle only poses the refiner's crop; a boom part whose neighbour hides a
# side has no angle of its own in the mask, and its band is shortened, so its apex drifts
MUST_READ = [
    ("model_mask_heldout_hard_000012.png", 0, 6.0, 15.0),
    ("model_mask_heldout_hard_000052.png", 0, 6.0, 15.0),
    ("model_mask_heldout_hard_000153.png", 0, 25.0, None),
    ("model_mask_heldout_000269.png", 0, 10.0, None),
    ("model_mask_heldout_hard_000032.png", 2, 6.0, 5.0),
]


def read_case(name: str) -> tuple[dict, list]:
    """A fixture's case and its mask read with its apex-head peaks, as the pipeline passes
    them (`with_apex_prior`)."""
    case = CASES[name]
    mask = (cv2.imread(str(FIXTURES / name), cv2.IMREAD_GRAYSCALE) > 0).astype(np.uint8)
    peaks = np.array(case["apex_peaks"], dtype=float).reshape(-1, 2)
    return case, measure_cones(mask, with_apex_prior(None, peaks, np.array(case["peak_heat"])))


@pytest.mark.parametrize(("name", "k", "apex_tol", "angle_tol"), MUST_READ)
def test_a_sure_peak_the_outline_misreads_is_read(name, k, apex_tol, angle_tol):
    case, readings = read_case(name)
    apexes = np.array([m.apex for m in readings], dtype=float)
    truth = case["truth"][k]
    d = np.hypot(*(apexes - np.array(truth["apex"])).T)
    nearest = readings[int(np.argmin(d))]
    assert d.min() <= apex_tol, f"{case['what']}: nearest apex {nearest.apex}"
    if angle_tol is not None:
        assert abs(nearest.included_angle_deg - truth["included_deg"]) <= angle_tol


def test_the_next_start_is_tried_where_the_straightest_fits_no_wedge():
    """A wide fan from the image's corner without an apex-head peak: the search's
    straightest start is a notch in the far front whose lines make no wedge; the fan's own
    blunt corner, next in rank, is read (`reading.fallback_wedge`). The coarse reading
    only poses the refiner's crop (which reads this one within 1 deg and 1 px), so its
    bounds are the crop's."""
    name = "model_mask_heldout_000243.png"
    case, (reading,) = read_case(name)
    truth = case["truth"][0]
    assert reading.ok, f"{case['what']}: {reading.flags}"
    assert np.hypot(*np.subtract(reading.apex, truth["apex"])) <= 40.0
    assert abs(reading.included_angle_deg - truth["included_deg"]) <= 15.0


def test_lines_that_do_not_open_report_no_plume():
    """Lit brackets without spray: a part whose two lines do not open away from their
    apex is no plume, so its reading has no apex (flag `no_wedge`), and nothing counts it
    as a plume; every other reading has its angles."""
    name = "model_mask_heldout_nospray_000053.png"
    case, readings = read_case(name)
    assert any(m.has(QualityFlag.NO_WEDGE) for m in readings), case["what"]
    for m in readings:
        assert m.ok or not np.isfinite(m.apex).any(), f"a plume without angles: {m.flags}"
