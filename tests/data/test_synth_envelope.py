"""Exactness of the synthetic ground truth: rasterisation, straight edges, masks, band."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spraycv.data.synth import render_sample
from spraycv.data.synth.envelope import EnvelopeSpec, envelope_mask, measure, polygon, warp
from spraycv.data.synth.raster import fill_polygon

SEEDS = [0, 1, 2, 3, 5, 8, 13, 21]


def _brute_fill(poly: np.ndarray, h: int, w: int) -> np.ndarray:
    """Even-odd test at every pixel centre, same half-open convention as fill_polygon."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    inside = np.zeros((h, w), bool)
    for (x0, y0), (x1, y1) in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        if y0 == y1:
            continue
        spans = (np.minimum(y0, y1) <= ys) & (ys < np.maximum(y0, y1))
        xc = x0 + (ys - y0) * (x1 - x0) / (y1 - y0)
        inside ^= spans & (xc <= xs)
    return inside


@pytest.mark.parametrize("seed", range(6))
def test_fill_polygon_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    # Random star-shaped polygons, some reaching beyond the image.
    ang = np.sort(rng.uniform(0, 2 * np.pi, n))
    rad = rng.uniform(5, 45, n)
    poly = np.stack([30 + rad * np.cos(ang), 25 + rad * np.sin(ang)], axis=1)
    assert np.array_equal(fill_polygon(poly, 50, 60), _brute_fill(poly, 50, 60))


def test_fill_polygon_outside_image_is_empty() -> None:
    poly = np.array([[-50.0, -50.0], [-10.0, -50.0], [-10.0, -10.0]])
    assert not fill_polygon(poly, 20, 20).any()


def _spec(**kw: object) -> EnvelopeSpec:
    base = dict(
        apex=(50.3, 20.7), axis=(math.sin(0.3), math.cos(0.3)), half_left_deg=30.0,
        half_right_deg=22.0, length=120.0, s_bend=70.0, gravity=0.3, gravity_dir=(0.0, 1.0),
        drag=0.4, front_flatness=0.8, ragged=(0.05, -0.03, 0.06, 0.0, -0.05),
    )  # fmt: skip
    base.update(kw)
    return EnvelopeSpec(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("side", ["left", "right"])
def test_edges_are_exactly_straight_before_s_bend(side: str) -> None:
    spec = _spec()
    alpha = math.radians(spec.half_left_deg if side == "left" else -spec.half_right_deg)
    a = np.linspace(0.0, spec.s_bend, 50)
    l = a * math.tan(alpha)  # noqa: E741
    u, n = np.array(spec.axis), np.array(spec.normal)
    expected = np.array(spec.apex) + a[:, None] * u + l[:, None] * n
    assert np.allclose(warp(spec, a, l), expected, atol=1e-9)
    # ... and beyond it the warp bends (this spec has gravity and drag).
    beyond = warp(spec, np.array([110.0]), np.array([110.0 * math.tan(alpha)]))
    assert not np.allclose(beyond, np.array(spec.apex) + 110.0 * (u + math.tan(alpha) * n))


def test_polygon_starts_with_apex_and_straight_left_edge() -> None:
    spec = _spec()
    p = polygon(spec)
    assert np.allclose(p[0], spec.apex)
    d = p[1] - np.array(spec.apex)  # the next vertex is on the left line at a = s_bend
    assert math.isclose(float(d @ np.array(spec.axis)), spec.s_bend, rel_tol=1e-9)
    assert math.isclose(
        math.degrees(math.atan2(d @ np.array(spec.normal), d @ np.array(spec.axis))),
        spec.half_left_deg,
    )


def _wedge_distances(nz: dict, h: int, w: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Axial coordinate and signed distances (px, > 0 inside) to the left and right lines."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    (ax, ay), (ux, uy) = nz["apex"], nz["axis"]
    dx, dy = xs - ax, ys - ay
    a, l = dx * ux + dy * uy, dx * -uy + dy * ux  # noqa: E741
    al, ar = math.radians(nz["half_angle_left_deg"]), math.radians(nz["half_angle_right_deg"])
    d_left = math.sin(al) * a - math.cos(al) * l
    d_right = math.sin(ar) * a + math.cos(ar) * l
    return a, d_left, d_right


@pytest.mark.parametrize("seed", SEEDS)
def test_mask_follows_ground_truth_lines_in_band(seed: int) -> None:
    res = render_sample(seed, 256)
    h, w = res.mask.shape
    own_union = np.zeros((h, w), bool)
    for nz in res.record["nozzles"]:
        if not nz["visible"]:
            continue
        own = envelope_mask(EnvelopeSpec(**nz["params"]["envelope"]), h, w)
        own_union |= own
        a, d_left, d_right = _wedge_distances(nz, h, w)
        band = (a >= nz["band"]["start_px"]) & (a <= nz["band"]["end_px"])
        inside = band & (d_left > 1.0) & (d_right > 1.0)
        outside = band & ((d_left < -1.0) | (d_right < -1.0))
        assert inside.sum() > 20
        assert own[inside].all() and res.mask[inside].all()
        assert not own[outside].any()
        # Ground truth measured on the mask rebuilt from the record.
        gt = measure(own, tuple(nz["apex"]), tuple(nz["axis"]))
        assert gt["area_px"] == nz["area_px"]
        assert gt["length_px"] == pytest.approx(nz["length_px"])
        assert gt["touches_border"] == nz["touches_border"]
        # Straight to beyond 0.5 L, far beyond the band end (0.4 L).
        assert nz["params"]["straight_to_px"] >= 0.5 * nz["length_px"]
    assert np.array_equal(own_union, res.mask.astype(bool))


@pytest.mark.parametrize("seed", SEEDS)
def test_instances_assign_overlaps_to_nearest_apex(seed: int) -> None:
    res = render_sample(seed, 192)
    assert np.array_equal(res.instances > 0, res.mask > 0)
    h, w = res.mask.shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    best = np.full((h, w), np.inf)
    expect = np.zeros((h, w), np.uint8)
    for nz in res.record["nozzles"]:
        if not nz["visible"]:
            assert not (res.instances == nz["index"] + 1).any()
            continue
        own = envelope_mask(EnvelopeSpec(**nz["params"]["envelope"]), h, w)
        d = np.hypot(xs - nz["apex"][0], ys - nz["apex"][1])
        win = own & (d < best)
        expect[win], best[win] = nz["index"] + 1, d[win]
    assert np.array_equal(expect, res.instances)
