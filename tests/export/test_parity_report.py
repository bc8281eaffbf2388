from __future__ import annotations

import pytest

from spraycv.export.parity import TOLERANCES, ParityReport


def _report(tol: str, n_apexes: int, kept: int) -> ParityReport:
    return ParityReport(
        reference="ref",
        candidate="cand",
        n_images=4,
        max_logit_diff=0.5,
        mask_iou=0.995,
        min_image_iou=0.99,
        n_angles=6,
        median_angle_diff=0.1,
        max_angle_diff=0.4,
        unmatched_plumes=0,
        tolerance=TOLERANCES[tol],
        n_apexes=n_apexes,
        apexes_kept=kept,
    )


@pytest.mark.parametrize(
    ("n_apexes", "kept", "ok"),
    [(0, 0, True), (20, 20, True), (20, 19, True), (20, 18, False)],
    ids=["no apex head", "all kept", "one lost of 20", "two lost of 20"],
)
def test_int8_parity_counts_the_apex_peaks_it_keeps(n_apexes: int, kept: int, ok: bool):
    report = _report("int8", n_apexes, kept)
    assert report.ok is ok
    assert ("apex peaks kept" in report.summary()) is (n_apexes > 0)
    if not ok:
        assert report.failures == ["apex peaks kept 0.900 < 0.95"]


@pytest.mark.parametrize(
    ("shifts", "ok"),
    [((), True), ((0.0, 0.2, 0.25, 2.0), True), ((0.1, 0.35, 0.4), False)],
    ids=["no apex channel", "median 0.23 px, one far", "median 0.35 px"],
)
def test_a_refiners_apex_channel_must_read_the_same_apex(shifts: tuple, ok: bool):
    """The apex read on a refiner's apex channel pins both sides: under INT8 its median shift
    is held to 0.3 crop px (a far one alone, a crop the channel is unsure of, does not fail
    it)."""
    from dataclasses import replace

    report = replace(_report("int8", 0, 0), channel_shifts_px=shifts)
    assert report.ok is ok
    assert ("apex channel shift" in report.summary()) is bool(shifts)
    if not ok:
        assert report.failures == ["apex channel shift median 0.350 px > 0.3 px"]


def test_a_model_that_keeps_the_aspect_is_checked_on_wide_frames_too(tmp_path, tiny_checkpoint):
    """Every second parity frame is 16:9 for such a model; the comparison batches each shape
    apart, and a graph of one size (stretch) is compared on the frames it stretches."""
    from dataclasses import replace

    from spraycv.export.parity import compare_predictors, parity_inputs
    from spraycv.runtime.predictor import ModulePredictor, load_predictor
    from spraycv.runtime.processing import ModelIO

    io = ModelIO((64, 64), (0.5,) * 3, (0.25,) * 3, resize="keep_aspect")
    weights, model, meta = tiny_checkpoint(tmp_path, io=io)
    shapes = [im.shape[:2] for im in parity_inputs(meta, 4, 64)]
    assert shapes == [(64, 64), (64, 114)] * 2
    stretch_meta = {**meta, "resize": "stretch"}
    assert [im.shape[:2] for im in parity_inputs(stretch_meta, 2, 64)] == [(64, 64)] * 2
    images = parity_inputs(meta, 4, 64)
    reference = load_predictor(weights)
    for candidate_io in (io, replace(io, resize="stretch")):
        candidate = ModulePredictor(model, candidate_io, meta)
        report = compare_predictors(reference, candidate, images, TOLERANCES["fp32"], batch_size=1)
        assert report.n_images == 4 and report.mask_iou == 1.0 and report.max_logit_diff == 0.0
    with pytest.raises(ValueError, match="disagree on their I/O"):
        compare_predictors(reference, ModulePredictor(model, replace(io, threshold=0.4)), images)


class _Fixed:
    """A predictor that returns fixed logits (N, 1, H, W) for any batch of N images."""

    def __init__(self, name: str, logits, io):
        self.name, self.logits, self.io = name, logits, io

    def infer(self, batch):
        return self.logits[: len(batch)]


@pytest.mark.parametrize(
    ("logit", "shift", "ok"),
    [(120.0, 2.4e-4, True), (120.0, 2.4e-3, False), (0.5, 2e-4, False), (0.5, 5e-5, True)],
    ids=[
        "a logit of 120 off by float32 rounding",
        "a logit of 120 off by 2e-5 of it",
        "a logit at the threshold off by 2e-4",
        "a logit at the threshold off by 5e-5",
    ],
)
def test_fp32_logits_are_held_to_an_absolute_and_a_relative_limit(logit, shift, ok):
    """FP32 parity compares each logit as numpy.isclose does (1e-4 + 1e-5 of its size): a
    refiner's apex channel runs to +-130, where float32 rounding alone moves a logit by more
    than 1e-4, while a logit near the mask threshold, which decides a pixel, stays held to
    1e-4. The plain maximum difference is reported beside the excess."""
    import numpy as np

    from spraycv.export.parity import compare_predictors
    from spraycv.runtime.processing import ModelIO

    io = ModelIO((32, 32), (0.5,) * 3, (0.25,) * 3)
    reference = np.full((2, 1, 32, 32), -8.0)
    reference[:, :, 8:24, 8:24] = logit
    candidate = reference.copy()
    candidate[:, :, 8:24, 8:24] += shift
    images = [np.zeros((32, 32, 3), np.uint8)] * 2
    report = compare_predictors(
        _Fixed("ref", reference, io), _Fixed("cand", candidate, io), images, TOLERANCES["fp32"]
    )
    assert report.ok is ok, report.summary()
    assert report.max_logit_diff == pytest.approx(shift)
    assert "beyond 1e-05 of the logit's size" in report.summary()
    if not ok:
        assert report.failures[0].startswith("logits differ by ")
