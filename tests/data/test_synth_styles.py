"""Renderer styles: exact truth in every style, dim and 16-bit frames, the default unchanged."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest
from pydantic import ValidationError

from spraycv.config.render import STYLES, RenderConfig, StyleConfig
from spraycv.data.synth import render_sample, render_video_frames, write_dataset
from spraycv.data.synth.envelope import EnvelopeSpec, envelope_mask
from spraycv.data.synth.layout import sample_scene
from spraycv.data.synth.props import (
    paint_brackets,
    paint_lens_dust,
    paint_lit_clutter,
    paint_reflection,
    paint_wet_surfaces,
)
from spraycv.data.synth.render import envelope_masks, streams
from spraycv.data.synth.style_context import StyleContext
from spraycv.data.synth.styles import EFFECTS, STYLE_EFFECTS, frame_style
from spraycv.data.synth.sunlight import across_spray
from spraycv.io.images import read_image

SIZE = 128
SEEDS = (3, 4)
NO_SPRAY = ("nozzles_off", "bare_background", "brackets_only")
NO_NOZZLES = ("bare_background", "brackets_only")
# Styles whose effects leave the scene's sampling alone: their frames are the standard
# frames of the same seed with another look (the twin has the same truth).
TWINNED = tuple(s for s in STYLES if not any(EFFECTS[e].config for e in STYLE_EFFECTS[s]))


def _only(style: str) -> RenderConfig:
    return RenderConfig.model_validate({"styles": {"weights": {style: 1.0}}})


def _digest(res: object) -> str:
    """The bytes of a render, for comparing two renders made on the same machine."""
    h = hashlib.sha256()
    for arr in (res.image, res.mask, res.instances):  # type: ignore[attr-defined]
        h.update(arr.tobytes())
    h.update(json.dumps(res.record, sort_keys=True).encode())  # type: ignore[attr-defined]
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Golden:
    """What renderer v1 (before styles existed) drew at 128 px for one seed: the mask's area,
    each nozzle's truth (apex x, y, included angle, length, area in px) and the image's
    mean grey level in 4 x 4 blocks. Compared with tolerances far below any change of the
    scene, and above the last-bit differences of numpy's and OpenCV's vector code between
    CPUs (the byte digest this replaced differed on one machine for seed 7)."""

    mask_area: int
    truth: tuple[tuple[float, float, float, float, int], ...]
    blocks: tuple[float, ...]


GOLDEN = {
    0: Golden(
        1910,
        ((100.6378, 46.4571, 116.8349, 23.5474, 783), (60.4048, 46.122, 116.8349, 21.9473, 613),
         (20.1718, 45.7868, 116.8349, 22.2555, 571)),
        (34.7, 36.6, 38.7, 34.5, 126.1, 103.7, 107.2, 128.5, 41.7, 21.1, 50.2, 59.0, 21.3, 10.6,
         18.5, 18.5),
    ),
    1: Golden(
        1875,
        ((120.2005, 64.2931, 44.4504, 27.8393, 298), (105.1536, 64.6577, 44.4504, 26.3308, 282),
         (90.1066, 65.0224, 44.4504, 27.1125, 300), (75.0597, 65.3871, 44.4504, 27.6276, 303),
         (60.0128, 65.7517, 44.4504, 26.1918, 258), (44.9659, 66.1164, 44.4504, 26.0949, 283),
         (29.919, 66.4811, 44.4504, 26.7554, 293)),
        (157.1, 165.3, 162.0, 152.2, 129.9, 143.4, 131.6, 129.1, 125.1, 203.9, 203.5, 206.2, 88.3,
         98.7, 96.5, 87.9),
    ),
    7: Golden(
        1834,
        ((92.3959, 38.4095, 26.3916, 27.6872, 169), (77.6721, 40.4455, 40.9998, 39.2266, 499),
         (62.9483, 42.4814, 34.4482, 21.5968, 142), (48.2245, 44.5174, 40.9998, 32.8305, 386),
         (33.5007, 46.5534, 40.9998, 32.2826, 357), (18.7769, 48.5894, 40.9998, 33.9163, 399)),
        (105.4, 129.5, 108.0, 61.4, 60.9, 96.4, 75.9, 39.1, 67.4, 84.1, 57.6, 37.0, 28.0, 38.3,
         46.0, 43.3),
    ),
}  # fmt: skip


@pytest.mark.parametrize("seed", sorted(GOLDEN))
def test_default_config_renders_what_renderer_v1_rendered(seed: int) -> None:
    res = render_sample(seed, SIZE)
    assert "style" not in res.record and "style_params" not in res.record
    assert res.image16 is None
    golden = GOLDEN[seed]
    assert abs(int(res.mask.sum()) - golden.mask_area) <= 2
    truth = [
        (*nz["apex"], nz["included_angle_deg"], nz["length_px"], nz["area_px"])
        for nz in res.record["nozzles"]
    ]
    np.testing.assert_allclose(np.array(truth), np.array(golden.truth), rtol=0, atol=2e-3)
    blocks = res.image.astype(np.float64).reshape(4, SIZE // 4, 4, SIZE // 4, -1)
    np.testing.assert_allclose(blocks.mean(axis=(1, 3, 4)).ravel(), golden.blocks, atol=0.5)


def test_standard_frames_of_a_mix_are_the_default_frames() -> None:
    mix = RenderConfig.model_validate({"styles": {"weights": {"standard": 1.0, "dim": 1.0}}})
    seen = set()
    for seed in range(12):
        res = render_sample(seed, 96, mix)
        seen.add(frame_style(res.record))
        if frame_style(res.record) == "standard":
            assert _digest(res) == _digest(render_sample(seed, 96))
    assert seen == {"standard", "dim"}


def test_style_tables_agree_with_the_config() -> None:
    assert tuple(STYLE_EFFECTS) == STYLES
    for effects in STYLE_EFFECTS.values():
        assert all(e in EFFECTS for e in effects)
        assert sum(EFFECTS[e].sensor is not None for e in effects) <= 1
    with pytest.raises(ValidationError):
        StyleConfig(weights={"glare": 1.0})
    with pytest.raises(ValidationError):
        StyleConfig(dim_peak_range=(10.0, 300.0))


def _check_truth(res: object, style: str) -> None:
    """Mask = union of the spraying nozzles' envelopes, rebuilt from the record."""
    rec, mask = res.record, res.mask  # type: ignore[attr-defined]
    h, w = mask.shape
    union = np.zeros((h, w), bool)
    for nz in rec["nozzles"]:
        if nz["visible"]:
            union |= envelope_mask(EnvelopeSpec(**nz["params"]["envelope"]), h, w)
    assert np.array_equal(union, mask.astype(bool))
    assert np.array_equal(res.instances > 0, mask > 0)  # type: ignore[attr-defined]
    assert frame_style(rec) == style and ("style" in rec) == (style != "standard")
    if style in NO_SPRAY:
        assert not mask.any() and not any(nz["visible"] for nz in rec["nozzles"])
    else:
        assert mask.any()
    if style in NO_NOZZLES:
        assert rec["nozzles"] == []


def _geometry(record: dict) -> list[dict]:
    """The nozzle records without appearance (lit bodies change the body colours)."""
    out = []
    for nz in record["nozzles"]:
        nz = dict(nz, params={k: v for k, v in nz["params"].items() if k != "body"})
        out.append(nz)
    return out


@pytest.mark.parametrize("style", STYLES)
def test_every_style_keeps_the_truth_exact(style: str) -> None:
    cfg, changed = _only(style), 0
    for seed in SEEDS:
        res = render_sample(seed, SIZE, cfg)
        assert res.image.shape == (SIZE, SIZE, 3) and res.image.dtype == np.uint8
        json.dumps(res.record)
        _check_truth(res, style)
        twin = render_sample(seed, SIZE)
        changed += int(not np.array_equal(res.image, twin.image))
        if style in TWINNED and style not in NO_SPRAY:  # same scene, same truth, new look
            assert np.array_equal(res.mask, twin.mask)
            assert np.array_equal(res.instances, twin.instances)
            assert _geometry(res.record) == _geometry(twin.record)
    assert changed == (0 if style == "standard" else len(SEEDS))


def test_nozzles_off_keeps_the_bodies_and_lists_them() -> None:
    res = render_sample(3, SIZE, _only("nozzles_off"))
    twin = render_sample(3, SIZE)
    assert [nz["state"] for nz in res.record["nozzles"]] == ["off"] * len(twin.record["nozzles"])
    assert [nz["apex"] for nz in res.record["nozzles"]] == [
        nz["apex"] for nz in twin.record["nozzles"]
    ]


@pytest.mark.parametrize("style", ["dim", "averaged_dim"])
def test_dim_frames_stay_at_or_below_80(style: str) -> None:
    for seed in range(6):
        res = render_sample(seed, SIZE, _only(style))
        peak = res.record["style_params"]["peak"]
        assert 30 <= peak <= 80
        assert int(res.image.max()) <= peak
        assert res.image.max() > 0


def test_hdr_frames_carry_raw_high_bit_depth_data() -> None:
    for seed in range(8):
        res = render_sample(seed, SIZE, _only("hdr"))
        p = res.record["style_params"]
        raw = res.image16
        assert raw is not None and raw.dtype == np.uint16 and raw.shape == (SIZE, SIZE, 3)
        if p["msb_aligned"]:
            assert not (raw & np.uint16((1 << (16 - p["bits"])) - 1)).any()
        else:
            assert int(raw.max()) < 2 ** p["bits"]
        assert res.image.dtype == np.uint8


def test_png16_writes_16_bit_pngs_that_round_trip(tmp_path: Path) -> None:
    cfg = RenderConfig.model_validate({"styles": {"weights": {"hdr": 1.0, "dim": 1.0}}})
    out = write_dataset(
        tmp_path / "ds", 6, size=96, seed=4, workers=1, image_format="png16", config=cfg,
        progress=False,
    )  # fmt: skip
    records = [json.loads(x) for x in (out / "labels.jsonl").read_text().splitlines()]
    assert {frame_style(r) for r in records} == {"hdr", "dim"}
    assert json.loads((out / "dataset.json").read_text())["image_format"] == "png16"
    for rec in records:
        stored = cv2.imread(str(out / rec["image"]), cv2.IMREAD_UNCHANGED)
        res = render_sample(rec["seed"], 96, cfg)
        if rec["style"] == "hdr":
            assert stored.dtype == np.uint16 and np.array_equal(stored, res.image16)
        else:
            assert stored.dtype == np.uint8 and np.array_equal(stored, res.image)
        assert read_image(out / rec["image"]).dtype == np.uint8  # the reader does not break


def test_jpg_datasets_get_the_8_bit_copy(tmp_path: Path) -> None:
    out = write_dataset(
        tmp_path / "ds", 2, size=80, seed=0, workers=1, config=_only("hdr"), progress=False
    )
    for line in (out / "labels.jsonl").read_text().splitlines():
        rec = json.loads(line)
        assert rec["image"].endswith(".jpg") and rec["style"] == "hdr"
        assert cv2.imread(str(out / rec["image"]), cv2.IMREAD_UNCHANGED).dtype == np.uint8


def _context(seed: int, size: int = 160) -> tuple[StyleContext, np.ndarray]:
    scene = sample_scene(streams(seed)[0], size, size, RenderConfig())
    spraying = np.logical_or.reduce(envelope_masks(scene))
    ctx = StyleContext(scene, StyleConfig(), np.random.default_rng(seed), spraying)
    return ctx, np.full((size, size, 3), 0.05, np.float32)


@pytest.mark.parametrize(
    "paint", [paint_brackets, paint_lit_clutter, paint_wet_surfaces], ids=lambda f: f.__name__
)
def test_props_never_touch_the_spray(paint: object) -> None:
    drawn = 0
    for seed in range(6):
        ctx, img = _context(seed)
        before = img.copy()
        paint(ctx, img)  # type: ignore[operator]
        changed = np.abs(img - before).max(axis=2) > 0
        assert not changed[ctx.spraying].any()
        drawn += int(changed.any())
    assert drawn >= 4  # and they do get drawn


def test_reflection_lies_beyond_the_spray() -> None:
    drawn = 0
    for seed in range(6):
        ctx, img = _context(seed)
        if ctx.scene.lighting == "back":
            continue
        dens = ctx.spraying.astype(np.float32)
        before = img.copy()
        paint_reflection(ctx, img, dens)
        changed = np.abs(img - before).max(axis=2) > 0
        assert not changed[ctx.spraying].any()
        drawn += int(changed.any())
    assert drawn >= 1


def test_lens_dust_marks_the_whole_frame() -> None:
    ctx, img = _context(1)
    before = img.copy()
    paint_lens_dust(ctx, img)
    assert ctx.params["dust_spots"] >= 3 and not np.array_equal(img, before)


def test_video_frames_share_one_style() -> None:
    frames = list(render_video_frames(5, n_frames=2, width=96, height=80, config=_only("dim")))
    assert [frame_style(f.record) for f in frames] == ["dim", "dim"]
    assert frames[0].record["style_params"] == frames[1].record["style_params"]
    plain = list(render_video_frames(5, n_frames=1, width=96, height=80))
    assert np.array_equal(frames[0].mask, plain[0].mask)


def _edge_step(image: np.ndarray, mask: np.ndarray) -> float:
    """Mean grey-level difference between the spray 2 px inside its boundary and 2 px out."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    kernel = np.ones((5, 5), np.uint8)
    inner = mask & ~cv2.erode(mask.astype(np.uint8), kernel).astype(bool)
    outer = cv2.dilate(mask.astype(np.uint8), kernel).astype(bool) & ~mask
    return abs(float(grey[inner].mean() - grey[outer].mean()))


def _texture(image: np.ndarray, core: np.ndarray) -> float:
    """Grey-level detail inside the spray's core: the spread of a 3 px high-pass."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return float((grey - cv2.GaussianBlur(grey, (0, 0), 3.0))[core].std())


def test_long_exposures_wash_droplets_into_a_sheet_with_a_crisp_edge() -> None:
    """A long exposure has less detail inside the spray than its standard twin, and its
    edge steps at least as clearly as the averaged look's (which blurs it)."""
    cfg, averaged = _only("long_exposure"), _only("averaged")
    for seed in range(3):
        sheet, twin, soft = (render_sample(seed, 256, c) for c in (cfg, None, averaged))
        mask = sheet.mask > 0
        core = cv2.erode(mask.astype(np.uint8), np.ones((9, 9), np.uint8)).astype(bool)
        assert core.sum() > 200, seed
        assert _texture(sheet.image, core) < 0.7 * _texture(twin.image, core), seed
        assert _edge_step(sheet.image, mask) > _edge_step(soft.image, mask), seed
        assert sheet.record["style_params"]["sheet_blur_px"] > 0


def _side_gain(res: object, twin: object, side: float) -> float:
    """Mean grey of the first nozzle's spray beyond q = 0.4 towards `side` (within its first
    half-length) over its standard twin's there."""
    env = EnvelopeSpec(**res.record["nozzles"][0]["params"]["envelope"])  # type: ignore[attr-defined]
    q, s = across_spray(env, *res.mask.shape)  # type: ignore[attr-defined]
    part = (res.mask > 0) & (side * q > 0.4) & (s < 0.5 * env.length)  # type: ignore[attr-defined]
    grey = [cv2.cvtColor(r.image, cv2.COLOR_BGR2GRAY)[part].mean() for r in (res, twin)]  # type: ignore[attr-defined]
    return float(grey[0] / max(grey[1], 1.0))


def test_side_lit_sprays_are_brighter_on_the_suns_side() -> None:
    """The side towards the sun gains brightness over the standard twin, the other loses it;
    the truth is the twin's (test_every_style_keeps_the_truth_exact)."""
    cfg, gaps = _only("side_lit"), []
    for seed in range(4):
        res, twin = render_sample(seed, SIZE * 2, cfg), render_sample(seed, SIZE * 2)
        sun = res.record["style_params"]["sun_side"]
        assert 0.0 < res.record["style_params"]["side_light"] < 1.0
        lit, shaded = _side_gain(res, twin, sun), _side_gain(res, twin, -sun)
        assert lit > shaded, (seed, lit, shaded)
        gaps.append(lit - shaded)
    assert np.mean(gaps) > 0.1  # less where a saturated spray clips the camera


def test_outdoor_frames_show_sunlit_ground_in_focus() -> None:
    """Outdoors the ground seen from above is bright and finely textured (leaves, clods),
    where the lab's dark cloth is smooth: a spray must be told from texture."""
    outdoor, lab = (
        _only("outdoor_sun"),
        RenderConfig.model_validate(
            {"appearance": {"prob_back_lit": 0.0, "front_background_probs": {"lab": 1.0}}}
        ),
    )
    canopies = 0
    for seed in range(4):
        res, dark = render_sample(seed, SIZE * 2, outdoor), render_sample(seed, SIZE * 2, lab)
        assert res.record["render"]["background"] in ("canopy", "field")
        if res.record["render"]["background"] != "canopy":
            continue  # a field under the horizon, blurred: field_background
        canopies += 1
        ground = (res.mask == 0) & (dark.mask == 0)
        grey = cv2.cvtColor(res.image, cv2.COLOR_BGR2GRAY)
        assert grey[ground].mean() > 40, seed
        assert _fine_detail(res.image, ground) > 3 * _fine_detail(dark.image, ground), seed
    assert canopies >= 2  # 70 % of outdoor frames


def _fine_detail(image: np.ndarray, part: np.ndarray) -> float:
    """Median absolute 3 px high-pass over a part of the frame (hardware edges aside)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return float(np.median(np.abs(grey - cv2.GaussianBlur(grey, (0, 0), 3.0))[part]))


def test_side_light_must_leave_the_dim_side_visible() -> None:
    with pytest.raises(ValidationError):
        StyleConfig(side_light_range=(0.2, 1.0))


@pytest.mark.parametrize(
    ("point", "q", "s"),
    [
        ((50.0, 60.0), 0.0, 50.0),  # on the axis (straight down from the apex)
        ((50.0 - 50.0 * np.tan(np.radians(20.0)), 60.0), -1.0, 50.0),  # on the left side
        ((50.0 + 50.0 * np.tan(np.radians(30.0)), 60.0), 1.0, 50.0),  # on the right side
        ((50.0, 0.0), 0.0, -10.0),  # behind the apex
    ],
)
def test_across_spray_places_the_sides_at_minus_and_plus_one(
    point: tuple[float, float], q: float, s: float
) -> None:
    """Apex (50, 10), axis down: the left side (n_left, towards -x here) at 20 deg, the
    right at 30 deg; q is read per side, so an asymmetric spray's sides are both at +-1."""
    env = EnvelopeSpec(
        apex=(50.0, 10.0), axis=(0.0, 1.0), half_left_deg=20.0, half_right_deg=30.0, length=80.0,
        s_bend=80.0, gravity=0.0, gravity_dir=(0.0, 1.0), drag=0.0, front_flatness=1.0, ragged=(),
    )  # fmt: skip
    qs, ss = across_spray(env, 100, 100)
    x, y = point
    row, col = round(y), round(x)
    frac = x - col  # the map is sampled at whole pixels: interpolate across x
    near = qs[row, col] + frac * (qs[row, col + 1] - qs[row, col])
    assert ss[row, col] == pytest.approx(s, abs=1e-4)
    if s > 0:
        assert near == pytest.approx(q, abs=0.03)
