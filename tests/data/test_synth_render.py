"""render_sample: shapes, determinism, record conventions (docs/cone_angle.md), config."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest
from pydantic import ValidationError

from spraycv.config.render import RenderConfig
from spraycv.data.synth import RenderResult, render_sample

SWEEP = range(40)
SIZE = 160


@pytest.fixture(scope="module")
def sweep() -> list[RenderResult]:
    return [render_sample(s, SIZE) for s in SWEEP]


def test_shapes_and_dtypes() -> None:
    res = render_sample(3, 128, height=96)
    assert res.image.shape == (96, 128, 3) and res.image.dtype == np.uint8
    assert res.mask.shape == (96, 128) and res.mask.dtype == np.uint8
    assert res.instances.shape == (96, 128) and res.instances.dtype == np.uint8
    assert set(np.unique(res.mask)) <= {0, 1}
    assert res.record["width"] == 128 and res.record["height"] == 96
    json.dumps(res.record)  # JSON-serialisable as is


def test_deterministic_and_independent_of_global_rng() -> None:
    # The legacy global RNG is exactly what the renderer must not depend on.
    np.random.seed(1)  # noqa: NPY002
    a = render_sample(11, 128)
    np.random.seed(2)  # noqa: NPY002
    np.random.random(100)  # noqa: NPY002
    b = render_sample(11, 128)
    assert a.image.tobytes() == b.image.tobytes()
    assert np.array_equal(a.mask, b.mask) and np.array_equal(a.instances, b.instances)
    assert json.dumps(a.record) == json.dumps(b.record)
    c = render_sample(12, 128)
    assert a.image.tobytes() != c.image.tobytes()


def test_record_conventions(sweep: list[RenderResult]) -> None:
    for res in sweep:
        rec = res.record
        assert rec["lighting"] in ("front", "back") and isinstance(rec["color"], bool)
        assert any(nz["visible"] for nz in rec["nozzles"])
        axes = {tuple(np.round(nz["axis"], 9)) for nz in rec["nozzles"]}
        assert len(axes) == 1  # one mounting axis per frame (boom nozzles are parallel)
        apex0 = np.array(rec["nozzles"][0]["apex"])
        for nz in rec["nozzles"]:
            ux, uy = nz["axis"]
            assert math.hypot(ux, uy) == pytest.approx(1.0)
            assert nz["tilt_deg"] == pytest.approx(math.degrees(math.atan2(ux, uy)))
            # Apexes on one line whose normal is the axis.
            assert (np.array(nz["apex"]) - apex0) @ np.array(nz["axis"]) == pytest.approx(
                0.0, abs=1e-6
            )
            x, y = nz["apex"]
            margin = 0.05 * SIZE - 1e-6
            assert margin <= x <= SIZE - 1 - margin and margin <= y <= SIZE - 1 - margin
            left, right = nz["half_angle_left_deg"], nz["half_angle_right_deg"]
            assert nz["included_angle_deg"] == pytest.approx(left + right)
            if not nz["visible"]:
                assert nz["state"] == "off"
                assert nz["area_px"] == 0 and nz["length_px"] == 0.0
                continue
            assert left >= 3.0 and right >= 3.0
            assert 10.0 - 1e-9 <= left + right <= 150.0 + 1e-9
            if nz["state"] in ("on", "weak"):
                assert abs(left - right) <= 10.0 + 1e-9
            length = nz["length_px"]
            assert length >= 0.8 * 0.16 * SIZE
            band = nz["band"]
            assert band["start_px"] == pytest.approx(max(0.1 * length, 4.0))
            assert band["end_px"] == pytest.approx(0.4 * length)
            assert band["start_frac"] == pytest.approx(band["start_px"] / length)
            assert nz["params"]["straight_to_px"] >= 0.5 * length
            # The band's ends on both boundary lines are inside the image.
            u, n = np.array(nz["axis"]), np.array([-uy, ux])
            for t in (math.tan(math.radians(left)), -math.tan(math.radians(right))):
                p = np.array(nz["apex"]) + band["end_px"] * (u + t * n)
                assert 0 <= p[0] <= SIZE - 1 and 0 <= p[1] <= SIZE - 1


def test_sweep_has_variety(sweep: list[RenderResult]) -> None:
    recs = [r.record for r in sweep]
    nozzles = [nz for r in recs for nz in r["nozzles"]]
    assert {r["lighting"] for r in recs} == {"front", "back"}
    assert {r["color"] for r in recs} == {True, False}
    assert {nz["nozzle_type"] for nz in nozzles} == {"flat_fan", "hollow_cone", "full_cone"}
    assert {len(r["nozzles"]) for r in recs} >= {1, 2}
    assert max(len(r["nozzles"]) for r in recs) >= 5
    assert any(abs(nz["tilt_deg"]) > 15 for nz in nozzles)


@pytest.mark.parametrize(
    ("overrides", "check"),
    [
        ({"appearance": {"prob_back_lit": 1.0}}, lambda r: r.record["lighting"] == "back"),
        ({"appearance": {"prob_back_lit": 0.0}}, lambda r: r.record["lighting"] == "front"),
        (
            {"appearance": {"prob_color": 0.0}},
            lambda r: (
                np.array_equal(r.image[..., 0], r.image[..., 1])
                and np.array_equal(r.image[..., 1], r.image[..., 2])
            ),
        ),
        ({"nozzle": {"prob_single": 1.0}}, lambda r: len(r.record["nozzles"]) == 1),
        (
            {
                "nozzle": {
                    "prob_single": 0.0,
                    "n_boom_range": (4, 4),
                    "included_deg_range": (10, 40),
                }
            },
            lambda r: len(r.record["nozzles"]) == 4,
        ),
        (
            {"nozzle": {"type_probs": {"hollow_cone": 1.0}}},
            lambda r: {n["nozzle_type"] for n in r.record["nozzles"]} == {"hollow_cone"},
        ),
        (
            {
                "nozzle": {
                    "prob_straight_down": 0.0,
                    "prob_rotated_camera": 0.0,
                    "tilt_deg_range": (25.0, 30.0),
                }
            },
            lambda r: all(24.0 < n["tilt_deg"] < 31.0 for n in r.record["nozzles"]),
        ),
    ],
)
def test_config_controls_sampling(overrides: dict, check: object) -> None:
    cfg = RenderConfig.model_validate(overrides)
    for seed in range(3):
        assert check(render_sample(seed, 128, cfg))  # type: ignore[operator]


@pytest.mark.parametrize(
    "bad",
    [
        {"nozzle": {"included_deg_range": (5.0, 90.0)}},
        {"nozzle": {"s_bend_frac_range": (0.3, 0.8)}},
        {"nozzle": {"type_probs": {"fan": 1.0}}},
        {"nozzle": {"tilt_deg_range": (10.0, -10.0)}},
        {"camera": {"unknown": 1}},
        {"appearance": {"spray_scale": 0.0}},
        {"appearance": {"spray_scale": 1.5}},
    ],
)
def test_config_rejects_bad_values(bad: dict) -> None:
    with pytest.raises(ValidationError):
        RenderConfig.model_validate(bad)


# the far view of configs/render/far_view.overrides (sprays small in the frame), plain
# backgrounds so that the light beside a spray is the spray's own
FAR_VIEW = {
    "nozzle": {
        "length_frac_range": (0.12, 0.3),
        "min_length_frac": 0.1,
        "body_width_frac_range": (0.015, 0.035),
    },
    "appearance": {"prob_clutter": 0.0, "prob_fixtures": 0.0},
}


def _ring(mask: np.ndarray, inner: int, outer: int) -> np.ndarray:
    """Pixels between `inner` and `outer` px outside a (H, W) uint8 mask."""
    disc = lambda r: cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))  # noqa: E731
    return (cv2.dilate(mask, disc(outer)) > 0) & ~(cv2.dilate(mask, disc(inner)) > 0)


def _spill(result: RenderResult) -> float:
    """The share of a spray's contrast found 3-12 px outside its truth (against 24-40 px)."""
    mask = (result.mask > 0).astype(np.uint8)
    grey = cv2.cvtColor(result.image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    inside = cv2.erode(mask, np.ones((5, 5), np.uint8)) > 0
    far = grey[_ring(mask, 24, 40)].mean()
    return float(
        abs(grey[_ring(mask, 3, 12)].mean() - far) / max(abs(grey[inside].mean() - far), 1e-3)
    )


def test_spray_scale_keeps_a_far_views_spray_on_its_truth() -> None:
    """appearance.spray_scale draws droplets, streaks and mist smaller with the sprays, as a
    camera further away sees them: less of the spray's light spills past its truth, and
    the geometry and the truth stay the same."""
    spills = {1.0: [], 0.4: []}
    for seed in range(8):
        for scale, found in spills.items():
            cfg = RenderConfig.model_validate(
                FAR_VIEW | {"appearance": {**FAR_VIEW["appearance"], "spray_scale": scale}}
            )
            result = render_sample(seed, 512, cfg)
            assert result.record["render"]["spray_px"] == pytest.approx(scale)
            found.append(_spill(result))
            if scale == 1.0:
                truth = result.mask
            else:
                np.testing.assert_array_equal(result.mask, truth)
    assert np.median(spills[0.4]) < 0.75 * np.median(spills[1.0])
