"""Bad input gives a MaskError naming the problem; every accepted encoding gives {0, 1}."""

from __future__ import annotations

import numpy as np
import pytest

from spraycv.geometry import MaskError, QualityFlag, measure_cones, validate_mask


def _noisy(values: list[int], dtype: type = np.uint8) -> np.ndarray:
    m = np.zeros((16, 16), dtype=dtype)
    m.flat[: len(values)] = values
    return m


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (np.zeros((32, 32, 3), np.uint8), "mask must be 2-D (H, W); got shape (32, 32, 3)"),
        (np.zeros((32, 32, 3), np.uint8), "pass one channel"),
        (np.zeros((4, 32, 32), np.uint8), "got shape (4, 32, 32)"),
        (np.zeros(32, np.uint8), "mask must be 2-D"),
        (np.zeros((32, 32), np.float32), "mask dtype float32 is not supported"),
        (np.zeros((32, 32), np.float64), "threshold it first (mask > 0.5)"),
        (np.zeros((32, 32), np.complex64), "mask dtype complex64 is not supported"),
        (_noisy([0, 3, 7]), "mask is not binary: found values [0, 3, 7]"),
        (_noisy([1, 255]), "mask is not binary: found values [0, 1, 255]"),
        (_noisy([-1, 1], np.int8), "mask is not binary: found values [-1, 0, 1]"),
        (_noisy(list(range(12))), "found values [0, 1, 2, 3, 4, 5, 6, 7, ...]"),
        ([[0, 1], [1, 0]], "mask must be a numpy array; got list"),
        (np.zeros((1, 40), np.uint8), "mask is too small"),
    ],
)
def test_bad_masks_name_the_problem(mask: object, message: str) -> None:
    with pytest.raises(MaskError) as err:
        validate_mask(mask)
    assert message in str(err.value)
    with pytest.raises(MaskError):
        measure_cones(mask)  # type: ignore[arg-type]


def test_mask_error_is_a_value_error() -> None:
    assert issubclass(MaskError, ValueError)


@pytest.mark.parametrize(
    "mask",
    [
        np.eye(8, dtype=bool),
        np.eye(8, dtype=np.uint8),
        np.eye(8, dtype=np.uint8) * 255,
        np.eye(8, dtype=np.int32),
        np.eye(8, dtype=np.uint16) * 255,
        np.eye(8, dtype=np.int64),
        np.asfortranarray(np.eye(8, dtype=np.uint8)),
    ],
)
def test_accepted_encodings_become_zero_one(mask: np.ndarray) -> None:
    out = validate_mask(mask)
    assert out.dtype == np.uint8 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, np.eye(8, dtype=np.uint8))


@pytest.mark.parametrize("dtype", [bool, np.uint8, np.int32])
def test_empty_mask_gives_no_spray_not_an_error(dtype: type) -> None:
    res = measure_cones(np.zeros((64, 80), dtype=dtype))
    assert len(res) == 1
    assert res[0].flags == (QualityFlag.NO_SPRAY,)
    assert np.isnan(res[0].included_angle_deg)
    assert res[0].to_dict()["included_angle_deg"] is None


def test_specks_only_give_no_spray() -> None:
    m = np.zeros((64, 64), np.uint8)
    m[10, 10] = m[40:42, 30:32] = 1  # removed by the opening / the area floor
    assert measure_cones(m)[0].has(QualityFlag.NO_SPRAY)
