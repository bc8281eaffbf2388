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
