"""Exposure: 16-bit reads whatever the bit alignment, a model's exposure normalisation the
same in training and at inference, and frames with nothing in them left dark."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from spraycv.config.data import AugmentConfig, DataConfig
from spraycv.data.augment import CameraGain, build_eval_transform
from spraycv.io.exposure import (
    Exposure,
    exposure_note,
    integer_percentiles,
    is_blank,
    normalise_exposure,
    percentile_stretch,
    to_uint8,
    under_exposed_level,
)
from spraycv.io.images import read_image
from spraycv.runtime.processing import ModelIO, preprocess


def scene(peak: float, size: int = 96, seed: int = 0) -> np.ndarray:
    """(size, size) float scene in [0, peak]: a dark background with a bright wedge."""
    yy, xx = np.mgrid[0:size, 0:size]
    wedge = (np.abs(xx - size / 2) < (yy - 10) * 0.5) & (yy > 10)
    rng = np.random.default_rng(seed)
    return (0.08 + 0.92 * wedge + rng.normal(0, 0.01, (size, size))).clip(0, 1) * peak


def wedge_of(image: np.ndarray) -> np.ndarray:
    size = image.shape[0]
    yy, xx = np.mgrid[0:size, 0:size]
    return (np.abs(xx - size / 2) < (yy - 10) * 0.5) & (yy > 10)


# (name, raw 16-bit frame): 12-bit data in either alignment, 10-bit, and a dim 12-bit frame
FRAMES_16 = [
    ("12-bit LSB-aligned", np.round(scene(4095)).astype(np.uint16)),
    ("12-bit MSB-aligned", np.round(scene(4095)).astype(np.uint16) << 4),
    ("10-bit LSB-aligned", np.round(scene(1023)).astype(np.uint16)),
    ("12-bit at 5 % of full scale", np.round(scene(0.05 * 4095)).astype(np.uint16)),
]


@pytest.mark.parametrize(("name", "raw"), FRAMES_16, ids=[f[0] for f in FRAMES_16])
def test_16_bit_files_read_with_their_contrast(tmp_path: Path, name: str, raw: np.ndarray):
    path = tmp_path / "frame.png"
    assert cv2.imwrite(str(path), raw)
    image = read_image(path)
    assert image.dtype == np.uint8 and image.shape == raw.shape, name
    inside, outside = image[wedge_of(image)], image[~wedge_of(image)]
    assert np.median(inside) > 200 and np.median(outside) < 60, name


def test_a_black_16_bit_frame_stays_dark():
    rng = np.random.default_rng(1)
    noise = rng.normal(20, 3, (64, 64)).clip(0).astype(np.uint16)  # read noise, 12-bit
    assert to_uint8(noise).max() < 100


def test_stretch_lifts_a_dim_frame_and_leaves_a_flat_one_dark():
    dim = np.round(scene(60)).astype(np.uint8)
    out = percentile_stretch(dim, 0.5, 99.8, 24.0)
    assert out[wedge_of(out)].mean() > 200
    flat = np.full((32, 32, 3), 12, np.uint8)
    assert percentile_stretch(flat, 0.5, 99.8, 24.0).max() == 0


# (mode, what the normalisation does to a dim colour frame)
MODES = [
    ("none", lambda img, out: out is img),
    ("stretch", lambda img, out: out.max() > 3 * img.max()),
    ("stretch_dim", lambda img, out: out.max() > 3 * img.max()),
    ("clahe", lambda img, out: out.shape == img.shape and out.mean() > img.mean()),
]


@pytest.mark.parametrize(("mode", "check"), MODES, ids=[m[0] for m in MODES])
def test_exposure_modes(mode, check):
    dim = np.repeat(np.round(scene(60))[..., None], 3, axis=2).astype(np.uint8)
    out = normalise_exposure(dim, Exposure(mode=mode))
    assert out.dtype == np.uint8 and check(dim, out)


# (name, peak grey level of the scene, whether stretch_dim stretches it): only an input whose
# bright percentile lies below dim_below (64) is stretched; a well-exposed one goes in as it is
DIM_OR_NOT = [
    ("dim 8-bit frame", 40, True),
    ("just below the bound", 62, True),
    ("well exposed", 200, False),
    ("just above the bound", 70, False),
]


@pytest.mark.parametrize(("name", "peak", "stretched"), DIM_OR_NOT, ids=[d[0] for d in DIM_OR_NOT])
def test_stretch_dim_touches_only_under_exposed_inputs(name, peak, stretched):
    image = np.repeat(np.round(scene(peak))[..., None], 3, axis=2).astype(np.uint8)
    out = normalise_exposure(image, Exposure(mode="stretch_dim"))
    assert (out is not image) == stretched, name
    expected = percentile_stretch(image, 0.5, 99.8, 24.0) if stretched else image
    np.testing.assert_array_equal(out, expected)


def test_stretch_dim_leaves_a_black_frame_dark():
    """A bare black frame is dim too: min_span keeps its read noise from becoming texture."""
    noise = np.random.default_rng(1).normal(3, 1, (64, 64, 3)).clip(0).astype(np.uint8)
    out = normalise_exposure(noise, Exposure(mode="stretch_dim"))
    assert out.max() < 80


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "gamma"}, "clahe, none, stretch, stretch_dim"),
        ({"low_pct": 50, "high_pct": 10}, "low < high"),
        ({"min_span": 0}, "min_span"),
        ({"dim_below": 0}, "dim_below"),
    ],
)
def test_bad_exposure_is_refused_with_the_valid_choices(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Exposure(**kwargs)


def test_sidecar_round_trip_and_older_sidecars_mean_none():
    io = ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3, exposure=Exposure(mode="stretch"))
    assert ModelIO.from_sidecar(io.to_sidecar()) == io
    old = io.to_sidecar()
    del old["normalization"]["exposure"]
    assert ModelIO.from_sidecar(old).exposure == Exposure()


def test_inference_and_training_normalise_alike():
    """The runtime's preprocess and the training eval transform give the same input."""
    cfg = DataConfig(input_size=64, exposure=Exposure(mode="stretch"), mean=(0.5,) * 3)
    io = ModelIO(cfg.input_size, cfg.mean, cfg.std, exposure=cfg.exposure)
    bgr = np.repeat(np.round(scene(50, size=128))[..., None], 3, axis=2).astype(np.uint8)
    runtime = preprocess([bgr], io)[0]
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    trained = build_eval_transform(cfg)(image=rgb)["image"].transpose(2, 0, 1)
    np.testing.assert_allclose(runtime, trained, atol=0.05)
    bright = np.clip(bgr.astype(np.float32) * 4.5, 0, 255).astype(np.uint8)
    assert np.abs(preprocess([bright], io)[0] - runtime).mean() < 0.1  # exposure mostly gone


@pytest.mark.parametrize(
    ("factors", "level", "mean_range", "clipped"),
    [
        ((0.1, 0.5), 200, (20, 100), 0.0),  # under-exposed: darker, nothing clipped
        ((1.3, 2.5), 200, (255, 255), 1.0),  # over-exposed: the bright part blown out
        ((1.3, 2.5), 60, (78, 150), 0.0),  # over-exposed: a dark part only brighter
    ],
)
def test_camera_gain_scales_within_its_range(factors, level, mean_range, clipped):
    image = np.full((16, 16, 3), level, np.uint8)
    out = CameraGain(factors, p=1.0)(image=image)["image"]
    assert out.dtype == np.uint8 and mean_range[0] <= out.mean() <= mean_range[1]
    assert (out == 255).mean() == clipped


def test_overexpose_range_below_one_is_refused():
    with pytest.raises(ValueError, match="overexpose_range"):
        AugmentConfig(overexpose_range=(0.8, 2.0))


@pytest.mark.parametrize(
    ("dtype", "top", "shape"),
    [(np.uint8, 256, (64, 80)), (np.uint16, 4096, (33, 7)), (np.uint16, 65536, (1,))],
)
@pytest.mark.parametrize("pcts", [(0.5, 99.8), (0.0, 100.0), (50.0,), (33.3, 66.6)])
def test_integer_percentiles_match_numpy(dtype, top, shape, pcts):
    values = np.random.default_rng(3).integers(0, top, shape).astype(dtype)
    np.testing.assert_allclose(integer_percentiles(values, pcts), np.percentile(values, pcts))


def test_integer_percentiles_of_more_values_than_one_chunk():
    """Chunks with different largest values still add up (the bins span the whole dtype)."""
    rng = np.random.default_rng(4)
    parts = [rng.integers(0, 100, 1 << 20), rng.integers(0, 4096, 1 << 20), [65535]]
    values = np.concatenate(parts).astype(np.uint16)
    pcts = (0.5, 50.0, 99.8)
    np.testing.assert_allclose(integer_percentiles(values, pcts), np.percentile(values, pcts))


# (name, 8-bit frame, the level reported): the brightest 0.2 % of the brightest channel
EXPOSURE_LEVELS = [
    ("well exposed", np.round(scene(255)).astype(np.uint8), None),
    ("dim", np.round(scene(40)).astype(np.uint8), 40.0),
    ("black", np.zeros((96, 96, 3), np.uint8), 0.0),
    ("dim but one bright channel", np.dstack([np.round(scene(30)).astype(np.uint8)] * 2
                                             + [np.round(scene(200)).astype(np.uint8)]), None),
    ("16-bit (read as 8 bits first)", np.round(scene(4095)).astype(np.uint16), None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "image", "level"), EXPOSURE_LEVELS, ids=[e[0] for e in EXPOSURE_LEVELS]
)
def test_under_exposed_frames_are_named_by_their_bright_level(name, image, level):
    got = under_exposed_level(image)
    assert got == (None if level is None else pytest.approx(level, abs=1.0))


def _noisy(level: float, sigma: float, shape=(480, 640, 3)) -> np.ndarray:
    noise = np.random.default_rng(0).normal(level, sigma, shape)
    return np.clip(noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize(
    ("image", "blank"),
    [
        (np.zeros((480, 640, 3), np.uint8), True),  # a capped lens
        (np.full((720, 1280), 255, np.uint8), True),  # a saturated sensor
        (np.full((64, 64, 3), 128, np.uint8), True),
        (_noisy(3, 1), True),  # dark, a little read noise
        (_noisy(3, 4), False),  # noise enough to hide nothing: the network decides
        (np.zeros((480, 640), np.uint16), False),  # 16 bits are stretched when read
        (np.zeros((0, 0, 3), np.uint8), False),
    ],
    ids=["black", "white", "grey", "dark-noise", "noisy", "16-bit", "empty"],
)
def test_flat_frames_are_blank(image: np.ndarray, blank: bool) -> None:
    assert is_blank(image) is blank


def test_a_dim_spray_is_not_blank() -> None:
    """A plume 30 grey levels over a black background covers more than 0.2 % of the frame."""
    image = np.zeros((480, 640, 3), np.uint8)
    cv2.fillConvexPoly(image, np.array([[320, 100], [250, 300], [390, 300]]), (30, 30, 30))
    assert not is_blank(image)


@pytest.mark.parametrize(
    ("image", "starts"),
    [
        (np.round(scene(40)).astype(np.uint8), "f.png: under-exposed (the brightest 0.2 % "),
        (np.zeros((48, 64, 3), np.uint8), "f.png: under-exposed (the brightest 0.2 % "),
        (np.full((48, 64, 3), 255, np.uint8), "f.png: a flat frame (its brightness spans "),
        (np.full((48, 64), 128, np.uint8), "f.png: a flat frame (its brightness spans "),
        (np.round(scene(220)).astype(np.uint8), None),
    ],
    ids=["dim", "black", "white", "grey", "lit"],
)
def test_a_frame_that_may_hide_spray_says_so(image: np.ndarray, starts: str | None) -> None:
    """Dark and flat frames get one line naming the file (no plume there does not mean no
    spray); a lit scene gets none. A black frame is dark first: its level is the advice."""
    note = exposure_note(image, "f.png")
    if starts is None:
        assert note is None
    else:
        assert note.startswith(starts) and "no plume here does not mean no spray" in note
