"""fit_wedge from an axis seed that misses a narrow plume: every band point lies on one side
of the seed, so the plume is fitted again along the band points' own direction."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_helpers import axis_of, wedge

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import clean_mask, find_blobs
from spraycv.geometry.wedge import FitOptions, fit_wedge

CASES = [  # (tilt, half angle, axis seed off by), deg: the seed outside the plume
    (20.0, 8.0, -12.0),
    (-15.0, 6.0, 10.0),
    (0.0, 10.0, 14.0),
    (30.0, 5.0, -9.0),
]


def _narrow_blob(tilt: float, half: float):
    mask, spec = wedge(400, tilt, half, half, 300.0)
    cfg = GeometryConfig()
    (blob,) = find_blobs(clean_mask(mask, cfg.open_px, cfg.close_px), 50, 0.01)
    return blob, spec, FitOptions.of(cfg, None)


@pytest.mark.parametrize(("tilt", "half", "off"), CASES)
def test_a_seed_beside_a_narrow_plume_still_fits_it(tilt, half, off):
    blob, spec, opts = _narrow_blob(tilt, half)
    fit = fit_wedge(blob.fit_pts, blob.hull, np.array(spec.apex), axis_of(tilt + off), False, opts)
    assert fit.ok
    included = math.degrees(math.acos(float(np.clip(fit.dir_left @ fit.dir_right, -1, 1))))
    assert included == pytest.approx(2 * half, abs=1.0)
    assert math.dist(fit.apex, spec.apex) < 4.0
    assert math.degrees(math.acos(min(1.0, float(fit.axis @ axis_of(tilt))))) < 1.0


@pytest.mark.parametrize(("tilt", "half", "off"), CASES[:2])
def test_a_fixed_axis_beside_the_plume_is_kept_and_fails(tilt, half, off):
    """A fixed axis (a hint's, the boom's) is the caller's: it is not moved."""
    blob, spec, opts = _narrow_blob(tilt, half)
    axis = axis_of(tilt + off)
    fit = fit_wedge(blob.fit_pts, blob.hull, np.array(spec.apex), axis, True, opts)
    assert not fit.ok
    assert np.allclose(fit.axis, axis)
