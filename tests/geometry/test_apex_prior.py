"""Likely apexes (MeasureHints.apex_prior) settle which corner of a triangle is the apex."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from spraycv.geometry import MeasureHints, measure_cones

CORNERS = np.array([[200, 60], [80, 268], [320, 268]])  # an equilateral-ish triangle


@pytest.fixture(scope="module")
def triangle() -> np.ndarray:
    mask = np.zeros((400, 400), np.uint8)
    cv2.fillPoly(mask, [CORNERS.astype(np.int32)], 1)
    return mask


@pytest.mark.parametrize("corner", range(3))
def test_prior_near_a_corner_makes_it_the_apex(triangle: np.ndarray, corner: int):
    near = CORNERS[corner] + np.array([6.0, -5.0])  # a heatmap peak is a few px off
    (m,) = measure_cones(triangle, MeasureHints(apex_prior=[tuple(near)]))
    assert np.hypot(*(np.array(m.apex) - CORNERS[corner])) < 3.0
    assert m.included_angle_deg == pytest.approx(60.0, abs=1.0)


@pytest.mark.parametrize(
    "prior",
    [[], [(390.0, 390.0)]],  # none detected; one far from every corner (a false peak)
    ids=["empty", "far"],
)
def test_prior_without_a_near_candidate_changes_nothing(triangle: np.ndarray, prior):
    (plain,) = measure_cones(triangle)
    (got,) = measure_cones(triangle, MeasureHints(apex_prior=prior))
    assert got.apex == plain.apex
    assert got.included_angle_deg == plain.included_angle_deg


def test_prior_on_a_real_plume_keeps_its_apex():
    mask = np.zeros((300, 300), np.uint8)
    cv2.ellipse(mask, (150, 40), (220, 220), 0, 65, 115, 1, -1)  # a 50 deg sector, apex on top
    (plain,) = measure_cones(mask)
    (got,) = measure_cones(mask, MeasureHints(apex_prior=[(152.0, 44.0)]))
    assert np.hypot(*(np.array(got.apex) - (150, 40))) < 3.0
    assert got.included_angle_deg == pytest.approx(plain.included_angle_deg, abs=1e-9)


@pytest.mark.parametrize(("strong", "weak"), [(k, j) for k in range(3) for j in range(3) if k != j])
def test_a_strong_likely_apex_outweighs_a_weak_one(triangle: np.ndarray, strong: int, weak: int):
    """Two corners marked, one surely (a nozzle) and one faintly (the head's stray peak at a
    far corner): the sure one is the apex, whichever corner the outline alone prefers."""
    prior = [tuple(CORNERS[strong] + [6.0, -5.0]), tuple(CORNERS[weak] + [-4.0, 5.0])]
    hints = MeasureHints(apex_prior=prior, apex_prior_strength=[0.9, 0.25])
    (m,) = measure_cones(triangle, hints)
    assert np.hypot(*(np.array(m.apex) - CORNERS[strong])) < 3.0
    assert m.included_angle_deg == pytest.approx(60.0, abs=1.0)


@pytest.mark.parametrize(
    "strength",
    [[0.9], [0.9, 0.5, 0.2], [1.5, 0.2], [-0.1, 0.5]],
    ids=["short", "long", "above 1", "below 0"],
)
def test_bad_prior_strength_is_refused_with_its_name(strength):
    hints = MeasureHints(apex_prior=[(10.0, 10.0), (20.0, 20.0)], apex_prior_strength=strength)
    with pytest.raises(ValueError, match="apex_prior_strength"):
        measure_cones(np.zeros((50, 50), np.uint8), hints)


@pytest.mark.parametrize("bad", [[(1.0, 2.0, 3.0)], [(np.nan, 1.0)], [[1.0]]])
def test_bad_prior_is_refused_with_its_name(bad):
    with pytest.raises(ValueError, match="apex_prior"):
        measure_cones(np.zeros((50, 50), np.uint8), MeasureHints(apex_prior=bad))


def _boom(apexes: list[tuple[int, int]], half_deg: float, length: int) -> np.ndarray:
    mask = np.zeros((360, 560), np.uint8)
    for x, y in apexes:
        cv2.ellipse(mask, (x, y), (length, length), 0, 90 - half_deg, 90 + half_deg, 1, -1)
    return mask


def test_a_merged_boom_read_at_its_likely_apexes():
    """read_at_likely gives one plume per likely apex on the boom line (a stray peak off
    the line is ignored), and measure_cones with that prior keeps the boom right."""
    from spraycv.config.geometry import GeometryConfig
    from spraycv.geometry.blobs import clean_mask, find_blobs
    from spraycv.geometry.candidates import read_at_likely
    from spraycv.geometry.context import ReadContext

    apexes = [(140, 40), (280, 40), (420, 40)]
    mask = _boom(apexes, 40.0, 260)
    near = [(x + 4.0, y - 6.0) for x, y in apexes] + [(280.0, 330.0)]  # and a stray peak
    cfg, hints = GeometryConfig(), MeasureHints(apex_prior=near)
    (blob,) = find_blobs(clean_mask(mask, 0, 3), 150, 0.02)
    ctx = ReadContext.of(cfg, hints, mask.shape)
    assert ctx.likely is not None
    reading = read_at_likely(blob, ctx.likely, ctx.opts)
    assert reading is not None and len(reading.plumes) == 3
    got = measure_cones(mask, hints)
    assert len(got) == 3
    for plume, m, (x, y) in zip(reading.plumes, got, apexes, strict=True):
        for apex in (plume.apex, m.apex):
            assert np.hypot(apex[0] - x, apex[1] - y) < 4.0
        assert m.included_angle_deg == pytest.approx(80.0, abs=1.5)


def test_collinear_drops_the_stray_peak():
    from spraycv.geometry.candidates import collinear

    pts = np.array([[0.0, 0.0], [100.0, 3.0], [200.0, -2.0], [150.0, 90.0], [300.0, 1.0]])
    np.testing.assert_array_equal(collinear(pts, 8.0), pts[[0, 1, 2, 4]])
    assert len(collinear(pts[:2], 8.0)) == 2
