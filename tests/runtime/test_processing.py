from __future__ import annotations

import cv2
import numpy as np
import pytest

from spraycv.runtime.processing import (
    ModelIO,
    apex_peaks,
    apex_points,
    postprocess,
    preprocess,
    same_input_size,
    upsampled_mask,
)

IO = ModelIO((64, 96), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), threshold=0.5)


def test_preprocess_resizes_normalises_and_swaps_to_rgb():
    bgr = np.zeros((30, 40, 3), np.uint8)
    bgr[..., 0] = 255  # blue
    batch = preprocess([bgr, bgr[..., 0]], IO)
    assert batch.shape == (2, 3, 64, 96) and batch.dtype == np.float32
    np.testing.assert_allclose(batch[0, 2], 2.0)  # blue ends up last in RGB: (1 - .5) / .25
    np.testing.assert_allclose(batch[0, 0], -2.0)
    np.testing.assert_allclose(batch[1], 2.0)  # gray 255 in all channels


@pytest.mark.parametrize("image", [np.zeros((4, 4, 4), np.uint8), np.zeros((4, 4, 3), np.float32)])
def test_preprocess_rejects_bad_images(image):
    with pytest.raises(ValueError, match="expected an"):
        preprocess([image], IO)


def test_postprocess_thresholds_at_full_resolution():
    logits = np.full((1, 1, 64, 96), -5.0, np.float32)
    logits[:, :, :, :48] = 5.0
    (mask,) = postprocess(logits, [(120, 200)], IO)
    assert mask.shape == (120, 200) and set(np.unique(mask)) == {0, 1}
    assert abs(int(mask[0].sum()) - 100) <= 1
    with pytest.raises(ValueError, match="shape"):
        postprocess(logits[:, 0], [(1, 1)], IO)
    with pytest.raises(ValueError, match="logit maps for"):
        postprocess(logits, [(1, 1), (2, 2)], IO)


def test_sidecar_round_trip():
    assert ModelIO.from_sidecar(IO.to_sidecar()) == IO


def _heat(points: list[tuple[float, float]], shape=(64, 96), sigma=2.0) -> np.ndarray:
    """(1, 2, h, w) logits: no spray, and Gaussian apex bumps (peak logit +3) at `points`."""
    yy, xx = np.mgrid[: shape[0], : shape[1]].astype(np.float32)
    prob = np.full(shape, 0.01, np.float32)
    for x, y in points:
        prob = np.maximum(prob, 0.95 * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * sigma**2)))
    logits = np.full((1, 2, *shape), -5.0, np.float32)
    logits[0, 1] = np.log(prob / (1 - prob))
    return logits


def test_apex_points_are_the_heatmap_peaks_in_image_pixels():
    io = ModelIO((64, 96), (0.5,) * 3, (0.25,) * 3, apex_threshold=0.3)
    logits = _heat([(20.0, 10.0), (70.0, 40.0)])
    (pts,) = apex_points(logits, [(128, 192)], io)  # the image is twice the network input
    expected = {(41.0, 21.0), (141.0, 81.0)}  # pixel centres ((x + 0.5) * 2)
    assert {tuple(p) for p in np.round(pts, 3)} == expected
    (mask,) = postprocess(logits, [(128, 192)], io)
    assert mask.sum() == 0  # channel 0 is still the mask


def test_apex_peaks_give_the_heat_of_each_peak_strongest_first():
    io = ModelIO((64, 96), (0.5,) * 3, (0.25,) * 3, apex_threshold=0.3)
    sure, half = (1 / (1 + np.exp(-_heat([xy])[0, 1])) for xy in ((20.0, 10.0), (70.0, 40.0)))
    prob = np.maximum(sure, half * 0.5 / 0.95)  # the second bump peaks at 0.5
    logits = _heat([])
    logits[0, 1] = np.log(prob / (1 - prob))
    ((pts, strength),) = apex_peaks(logits, [(128, 192)], io)
    assert [tuple(p) for p in np.round(pts, 3)] == [(41.0, 21.0), (141.0, 81.0)]
    np.testing.assert_allclose(strength, [0.95, 0.5], atol=1e-6)
    (alone,) = apex_points(logits, [(128, 192)], io)
    np.testing.assert_array_equal(alone, pts)


@pytest.mark.parametrize(
    ("apex_threshold", "channels"), [(None, 2), (0.3, 1)], ids=["no head in metadata", "1 channel"]
)
def test_apex_points_are_empty_without_an_apex_head(apex_threshold, channels):
    io = ModelIO((64, 96), (0.5,) * 3, (0.25,) * 3, apex_threshold=apex_threshold)
    logits = _heat([(20.0, 10.0)])[:, :channels]
    (pts,) = apex_points(logits, [(64, 96)], io)
    assert pts.shape == (0, 2)


def test_apex_points_below_threshold_or_twins_give_one_point_or_none():
    io = ModelIO((64, 96), (0.5,) * 3, (0.25,) * 3, apex_threshold=0.3)
    twin = _heat([(20.0, 10.0)])
    twin[0, 1, 10, 21] = twin[0, 1, 10, 20]  # a plateau: two equal maxima side by side
    assert len(apex_points(twin, [(64, 96)], io)[0]) == 1
    faint = _heat([])
    assert len(apex_points(faint, [(64, 96)], io)[0]) == 0


def test_model_io_keeps_the_apex_threshold_through_the_sidecar():
    io = ModelIO((64, 96), (0.5,) * 3, (0.25,) * 3, apex_threshold=0.25)
    assert ModelIO.from_sidecar(io.to_sidecar()) == io
    assert "apex_threshold" not in IO.to_sidecar()


@pytest.mark.parametrize(
    ("logit_size", "size"),
    [
        ((320, 320), (3648, 5472)),
        ((256, 256), (1001, 777)),
        ((40, 64), (333, 2000)),
        ((8, 8), (9, 9)),
    ],
)
def test_banded_upsampling_equals_one_resize(logit_size, size):
    """Large frames are upsampled a band of rows at a time (bounded memory), to the very
    mask that one cv2.resize of the whole logit map gives."""
    rng = np.random.default_rng(sum(size))
    logit = cv2.GaussianBlur(rng.normal(0, 3, logit_size).astype(np.float32), (0, 0), 2)
    whole = (cv2.resize(logit, size[::-1], interpolation=cv2.INTER_LINEAR) > 0.2).astype(np.uint8)
    banded = upsampled_mask(logit, size, 0.2, band_pixels=5000)
    assert banded.dtype == np.uint8 and banded.shape == size
    assert np.array_equal(banded, whole)
    assert np.array_equal(upsampled_mask(logit, size, 0.2), whole)


KEEP = ModelIO((256, 256), (0.5, 0.5, 0.5), (0.25, 0.25, 0.25), resize="keep_aspect")


@pytest.mark.parametrize(
    ("io", "image_size", "network_size"),
    [
        (IO, (512, 912), (64, 96)),  # stretch: always the input size
        (KEEP, (512, 512), (256, 256)),
        (KEEP, (512, 912), (256, 448)),  # 16:9: 455 px, the nearest multiple of 32
        (KEEP, (480, 640), (256, 352)),  # 4:3: 341 px
        (KEEP, (640, 480), (352, 256)),  # portrait
        (KEEP, (100, 4000), (256, 1024)),  # beyond MAX_ASPECT: squeezed to 4:1
        (KEEP, (300, 310), (256, 256)),  # never below the input size
    ],
)
def test_network_size_keeps_the_aspect_only_when_asked(io, image_size, network_size):
    assert io.network_size(image_size) == network_size
    batch = preprocess([np.zeros((*image_size, 3), np.uint8)], io)
    assert batch.shape == (1, 3, *network_size)


def test_images_of_other_shapes_go_in_separate_batches():
    images = [np.zeros(s, np.uint8) for s in [(512, 912, 3), (512, 512, 3), (1080, 1920), (64, 64)]]
    assert same_input_size(images, KEEP) == [[0, 2], [1, 3]]
    assert same_input_size(images, IO) == [[0, 1, 2, 3]]
    with pytest.raises(ValueError, match="one network input size"):
        preprocess(images, KEEP)


def test_resize_mode_goes_through_the_sidecar_and_is_checked():
    assert ModelIO.from_sidecar(KEEP.to_sidecar()) == KEEP
    old = {k: v for k, v in KEEP.to_sidecar().items() if k != "resize"}
    assert ModelIO.from_sidecar(old).resize == "stretch"  # a sidecar from before the mode
    with pytest.raises(ValueError, match=r"resize must be one of \['stretch', 'keep_aspect'\]"):
        ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3, resize="letterbox")
