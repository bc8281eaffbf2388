from __future__ import annotations

import numpy as np
import pytest

from spraycv.runtime.processing import ModelIO, postprocess, preprocess

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
