"""Camera blur of the refiner's training crops (spraycv.refine.blur): kernels that sum to
one and point where they are told, a crop blurred in the image whose edge stays put."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spraycv.config.refine import CropBlur
from spraycv.refine.blur import blurred_crop, gaussian_kernel, motion_kernel, random_kernel
from spraycv.refine.pose import crop_pose, pose_transform, warp_crop

SIZE = (128, 128)


def _moments(kernel: np.ndarray) -> np.ndarray:
    """(2, 2) second moments of a kernel about its centre (x, y)."""
    r = (kernel.shape[0] - 1) / 2
    ys, xs = np.mgrid[0 : kernel.shape[0], 0 : kernel.shape[1]] - r
    w = kernel / kernel.sum()
    return np.array([[(w * xs * xs).sum(), (w * xs * ys).sum()],
                     [(w * xs * ys).sum(), (w * ys * ys).sum()]])  # fmt: skip


@pytest.mark.parametrize("sigma", [0.5, 1.5, 4.0])
def test_a_gaussian_kernel_sums_to_one_with_its_spread(sigma):
    kernel = gaussian_kernel(sigma)
    assert kernel.sum() == pytest.approx(1.0, abs=1e-5)
    assert np.sqrt(np.diag(_moments(kernel))) == pytest.approx([sigma, sigma], rel=0.1, abs=0.05)


@pytest.mark.parametrize(("length", "angle"), [(4.0, 0.0), (9.0, 90.0), (12.0, 30.0)])
def test_a_motion_kernel_sums_to_one_along_its_angle(length, angle):
    kernel = motion_kernel(length, angle)
    assert kernel.sum() == pytest.approx(1.0, abs=1e-5)
    values, vectors = np.linalg.eigh(_moments(kernel))
    along = vectors[:, 1]
    turn = math.degrees(math.acos(abs(float(along @ [math.cos(math.radians(angle)),
                                                     math.sin(math.radians(angle))]))))  # fmt: skip
    assert turn < 3.0
    # a uniform line of length L has an SD of L / sqrt(12) along it
    assert math.sqrt(values[1]) == pytest.approx(length / math.sqrt(12), rel=0.2)
    assert values[0] < 0.1 * values[1]


def _edge_image() -> np.ndarray:
    """(512, 512, 3) uint8: bright left of x = 255.5, dark right of it."""
    image = np.full((512, 512, 3), 30, np.uint8)
    image[:, :256] = 220
    return image


def test_an_identity_kernel_cuts_the_plain_crop():
    image = _edge_image()
    transform = pose_transform(crop_pose((250, 100), (0.3, 1.0), 200, 30), SIZE)
    one = np.ones((1, 1), np.float32)
    assert np.array_equal(
        blurred_crop(image, transform, SIZE, one), warp_crop(image, transform, SIZE)
    )


def test_a_blurred_edge_stays_where_it_was_and_widens():
    image = _edge_image()
    transform = pose_transform(crop_pose((255.5, 100), (0.0, 1.0), 200, 30), SIZE)
    sharp = warp_crop(image, transform, SIZE)[64, :, 0].astype(float)
    soft = blurred_crop(image, transform, SIZE, gaussian_kernel(3.0))[64, :, 0].astype(float)
    mid = (220 + 30) / 2

    def crossing(profile):
        k = int(np.argmax(profile < mid))
        return k - 1 + (profile[k - 1] - mid) / (profile[k - 1] - profile[k])

    assert crossing(soft) == pytest.approx(crossing(sharp), abs=0.3)  # the truth stays put

    def ramp(profile):  # crop columns between 10 % and 90 % of the step
        return int(((profile < 201) & (profile > 49)).sum())

    assert ramp(soft) > ramp(sharp) + 2


def test_a_crop_outside_the_image_is_black():
    transform = pose_transform(crop_pose((2000, 2000), (0.0, 1.0), 100, 20), SIZE)
    crop = blurred_crop(_edge_image(), transform, SIZE, gaussian_kernel(1.0))
    assert not crop.any()


def test_random_kernels_draw_both_kinds_within_their_ranges():
    blur = CropBlur(frac=1.0, gaussian_px=(1.0, 2.0), motion_px=(6.0, 8.0))
    rng = np.random.default_rng(0)
    kinds = {"defocus": 0, "motion": 0}
    for _ in range(40):
        small, large = np.sqrt(np.linalg.eigvalsh(_moments(random_kernel(blur, rng))))
        if large > 1.5 * small:  # a streak: its SD along it is L / sqrt(12)
            kinds["motion"] += 1
            assert 6.0 * 0.8 <= large * math.sqrt(12) <= 8.0 * 1.2
        else:
            kinds["defocus"] += 1
            assert 1.0 * 0.9 <= large <= 2.0 * 1.1
    assert min(kinds.values()) >= 10
