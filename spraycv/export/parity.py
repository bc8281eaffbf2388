"""Parity of an exported model against PyTorch on real rendered images.

Both predictors see the same pre-processed batch (pre-processing is shared code), so the
report isolates the network: max abs logit difference, mask IoU after the shared
post-processing, and the difference of the cone angles measured on both masks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spraycv.runtime.predictor import Predictor
    from spraycv.runtime.processing import ModelIO

PARITY_SEED0 = 1_000_000  # seeds away from calibration (0...) and training data
CALIB_SEED0 = 2_000_000


@dataclass(frozen=True)
class Tolerance:
    """Pass limits; None switches a criterion off (logits of INT8 or FP16 differ by design).

    Logits pass where each differs from the reference's by at most max_logit_diff plus
    logit_rtol of its size (as numpy.isclose): tight near the mask threshold, where a logit
    decides a pixel, and relative where it is large (a refiner's apex channel reaches about
    +-130, where float32 rounding alone moves a logit by 1e-4: experiments row 191)."""

    max_logit_diff: float | None = 1e-4
    min_mask_iou: float = 0.999
    max_median_angle_diff: float | None = None  # degrees
    min_apex_kept: float = 0.99  # share of the reference's apex peaks the candidate keeps
    # a refiner's apex channel: the median shift (crop px) of the apex read on it
    max_median_channel_shift: float = 0.05
    logit_rtol: float = 1e-5  # with max_logit_diff: each logit's share of its own size


# INT8 moves the apex read on a refiner's apex channel by 0.15-0.21 crop px (median over 50
# and 8 crops; more Convs in float do not bring it lower), a third to a half of the error of
# the edges' own apex (0.44 px along the axis): 0.3 px bounds it (experiments row 115)
TOLERANCES: dict[str, Tolerance] = {
    "fp32": Tolerance(1e-4, 0.999, None),
    "fp16": Tolerance(None, 0.99, 0.3, 0.95, 0.3),
    "int8": Tolerance(None, 0.99, 0.3, 0.95, 0.3),
}
APEX_PARITY_PX = 8.0  # a candidate apex peak this close to the reference's keeps it


@dataclass(frozen=True)
class ParityReport:
    """Candidate against reference on `n_images` rendered images.

    mask_iou pools intersections and unions over all images; min_image_iou is the worst one.
    Angle differences are |included angle| differences of plumes matched by apex, in degrees.
    """

    reference: str
    candidate: str
    n_images: int
    max_logit_diff: float  # the largest |candidate - reference| logit difference
    mask_iou: float
    min_image_iou: float
    n_angles: int
    median_angle_diff: float
    max_angle_diff: float
    unmatched_plumes: int
    tolerance: Tolerance = field(default_factory=Tolerance)
    n_apexes: int = 0  # apex-head peaks of the reference (0 without an apex head)
    apexes_kept: int = 0  # of those, with a candidate peak within APEX_PARITY_PX
    channel_shifts_px: tuple[float, ...] = ()  # a refiner's apex channel: reading shift per crop
    # the largest logit difference beyond tolerance.logit_rtol of the reference logit's size
    # (None: not measured, the plain difference is held to max_logit_diff)
    max_logit_excess: float | None = None

    @property
    def failures(self) -> list[str]:
        """The criteria that failed, as readable sentences (empty when ok)."""
        tol, out = self.tolerance, []
        excess = self.max_logit_diff if self.max_logit_excess is None else self.max_logit_excess
        if tol.max_logit_diff is not None and not excess <= tol.max_logit_diff:
            out.append(
                f"logits differ by {excess:.3g} beyond {tol.logit_rtol:g} of their size"
                f" > {tol.max_logit_diff:g} (max abs logit diff {self.max_logit_diff:.3g})"
            )
        if not self.mask_iou >= tol.min_mask_iou:
            out.append(f"mask IoU {self.mask_iou:.5f} < {tol.min_mask_iou:g}")
        limit = tol.max_median_angle_diff
        if limit is not None and self.n_angles and not self.median_angle_diff <= limit:
            out.append(f"median angle diff {self.median_angle_diff:.3f} deg > {limit:g} deg")
        kept = self.apexes_kept / self.n_apexes if self.n_apexes else 1.0
        if not kept >= tol.min_apex_kept:
            out.append(f"apex peaks kept {kept:.3f} < {tol.min_apex_kept:g}")
        shift = self.median_channel_shift
        if not shift <= tol.max_median_channel_shift:
            limit = tol.max_median_channel_shift
            out.append(f"apex channel shift median {shift:.3f} px > {limit:g} px")
        return out

    @property
    def median_channel_shift(self) -> float:
        """Median shift (crop px) of the apex read on a refiner's apex channel (0 without)."""
        return float(np.median(self.channel_shifts_px)) if self.channel_shifts_px else 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """A few printable lines."""
        angles = (
            f"median {self.median_angle_diff:.3f} deg, max {self.max_angle_diff:.3f} deg "
            f"over {self.n_angles} plumes ({self.unmatched_plumes} unmatched)"
            if self.n_angles
            else f"n/a (no plume measured on both masks; {self.unmatched_plumes} unmatched)"
        )
        verdict = "PASS" if self.ok else "FAIL: " + "; ".join(self.failures)
        return "\n".join(
            [
                f"parity {self.candidate} vs {self.reference} on {self.n_images} rendered images",
                f"  max abs logit diff  {self.max_logit_diff:.3g}{self._excess_note()}",
                f"  mask IoU            {self.mask_iou:.5f} (worst image {self.min_image_iou:.5f})",
                f"  cone-angle diff     {angles}",
                *(
                    [f"  apex peaks kept     {self.apexes_kept}/{self.n_apexes}"]
                    if self.n_apexes
                    else []
                ),
                *([self._channel_line()] if self.channel_shifts_px else []),
                f"  {verdict}",
            ]
        )

    def _excess_note(self) -> str:
        """What of the largest difference the FP32 limit counts (nothing where none holds)."""
        if self.max_logit_excess is None or self.tolerance.max_logit_diff is None:
            return ""
        rtol = self.tolerance.logit_rtol
        return f" ({self.max_logit_excess:.3g} beyond {rtol:g} of the logit's size)"

    def _channel_line(self) -> str:
        shifts = self.channel_shifts_px
        return (f"  apex channel shift  median {self.median_channel_shift:.3f} px, "
                f"max {max(shifts):.3f} px over {len(shifts)} crops")  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok, "failures": self.failures}


def rendered_images(n: int, size: int = 384, seed0: int = PARITY_SEED0) -> list[np.ndarray]:
    """n rendered (size, size, 3) uint8 BGR images, from seeds seed0, seed0 + 1, ..."""
    from spraycv.data.synth import render_sample

    return [render_sample(seed0 + i, size).image for i in range(n)]


def model_inputs(meta: dict, n: int, size: int, seed0: int = PARITY_SEED0) -> list[np.ndarray]:
    """n rendered images of what the model described by `meta` (its sidecar) is fed: whole
    frames of `size`, or a refiner's canonical crops (at its own input size)."""
    if "refiner" in meta:
        from spraycv.refine.data import rendered_crops

        return rendered_crops(n, int(meta["input_size"][0]), seed0)
    return rendered_images(n, size, seed0)


WIDE = 16 / 9  # the second frame shape a model that keeps the aspect is checked on


def parity_inputs(meta: dict, n: int, size: int, seed0: int = PARITY_SEED0) -> list[np.ndarray]:
    """`model_inputs`, but every second frame rendered 16:9 (`size` high) for a model whose
    sidecar keeps the aspect: its graph then runs at a second input size, checked too."""
    if "refiner" in meta or meta.get("resize") != "keep_aspect":
        return model_inputs(meta, n, size, seed0)
    from spraycv.data.synth import render_sample

    wide = round(size * WIDE)
    return [render_sample(seed0 + i, wide if i % 2 else size, height=size).image for i in range(n)]


def _channel_shifts(reference: np.ndarray, candidate: np.ndarray) -> list[float]:
    """Per crop, how far (crop px) the apex read on the candidate's apex logits (N, H, W)
    lies from the reference's (spraycv.refine.apex)."""
    from spraycv.refine.apex import read_apex

    return [float(np.hypot(*(read_apex(r)[0] - read_apex(c)[0])))
            for r, c in zip(reference, candidate, strict=True)]  # fmt: skip


def _angle_diffs(ref_masks: Sequence[np.ndarray], cand_masks: Sequence[np.ndarray]):
    from spraycv.geometry.matching import compare_readings
    from spraycv.measure import Measurer

    measurer = Measurer()
    diffs: list[float] = []
    unmatched = 0
    for ref_mask, cand_mask in zip(ref_masks, cand_masks, strict=True):
        compared = compare_readings(
            measurer.read_mask(ref_mask).measurements, measurer.read_mask(cand_mask).measurements
        )
        unmatched += compared.missed + compared.extra
        diffs += [abs(e) for e in compared.errors_deg]
    return diffs, unmatched


def _batches(images: Sequence[np.ndarray], io: ModelIO, batch_size: int) -> list[list[np.ndarray]]:
    """The images in batches of at most `batch_size`, each batch of one input size."""
    from spraycv.runtime.processing import same_input_size

    return [
        [images[i] for i in group[start : start + batch_size]]
        for group in same_input_size(images, io)  # frames of other shapes: other batches
        for start in range(0, len(group), batch_size)
    ]


def _apexes_matched(
    ref_pts: Sequence[np.ndarray], cand_pts: Sequence[np.ndarray]
) -> tuple[int, int]:
    """(the reference's apex peaks, how many of them have a candidate peak within
    APEX_PARITY_PX), over images whose peaks are (K, 2) arrays."""
    n_apexes = apexes_kept = 0
    for r, c in zip(ref_pts, cand_pts, strict=True):
        n_apexes += len(r)
        if len(r) and len(c):
            d = np.hypot(*(r[:, None, :] - c[None, :, :]).transpose(2, 0, 1))
            apexes_kept += int((d.min(axis=1) <= APEX_PARITY_PX).sum())
    return n_apexes, apexes_kept


def _logit_gaps(reference: np.ndarray, candidate: np.ndarray, rtol: float) -> tuple[float, float]:
    """(the largest |candidate - reference| over two logit arrays of one shape, the largest
    part of a difference beyond rtol of its reference logit's size)."""
    diff = np.abs(reference - candidate)
    return float(diff.max()), float((diff - rtol * np.abs(reference)).max())


def compare_predictors(
    reference: Predictor,
    candidate: Predictor,
    images: Sequence[np.ndarray],
    tolerance: Tolerance | None = None,
    batch_size: int = 8,
) -> ParityReport:
    """Run both predictors on the same images and compare logits, masks and cone angles.

    Args:
        images: N (H, W, 3) uint8 BGR images.
    """
    from spraycv.runtime.processing import apex_points, postprocess, preprocess

    # a graph of one size stretches frames that are not square: the same I/O for these images
    if replace(reference.io, resize=candidate.io.resize) != candidate.io:
        raise ValueError(f"the models disagree on their I/O: {reference.io} vs {candidate.io}")
    io = candidate.io  # the reference runs at any size the candidate's graph takes
    tolerance = tolerance or Tolerance()
    max_diff, excess, inter, union, worst = 0.0, -math.inf, 0, 0, 1.0
    n_apexes = apexes_kept = 0
    channel_shifts: list[float] = []
    ref_masks: list[np.ndarray] = []
    cand_masks: list[np.ndarray] = []
    for chunk in _batches(images, io, batch_size):
        batch = preprocess(chunk, io)
        ref_logits, cand_logits = reference.infer(batch), candidate.infer(batch)
        largest, beyond = _logit_gaps(ref_logits, cand_logits, tolerance.logit_rtol)
        max_diff, excess = max(max_diff, largest), max(excess, beyond)
        sizes = [im.shape[:2] for im in chunk]
        ref_chunk = postprocess(ref_logits, sizes, io)
        for a, b in zip(ref_chunk, postprocess(cand_logits, sizes, io), strict=True):
            i, u = int(np.count_nonzero(a & b)), int(np.count_nonzero(a | b))
            inter, union = inter + i, union + u
            worst = min(worst, i / u if u else 1.0)
            ref_masks.append(a)
            cand_masks.append(b)
        if io.apex_threshold is None and ref_logits.shape[1] > 1:  # a refiner's apex channel
            channel_shifts += _channel_shifts(ref_logits[:, 1], cand_logits[:, 1])
        ref_pts, cand_pts = apex_points(ref_logits, sizes, io), apex_points(cand_logits, sizes, io)
        found, kept = _apexes_matched(ref_pts, cand_pts)
        n_apexes, apexes_kept = n_apexes + found, apexes_kept + kept
    diffs, unmatched = _angle_diffs(ref_masks, cand_masks)
    return ParityReport(
        reference=reference.name,
        candidate=candidate.name,
        n_images=len(images),
        max_logit_diff=max_diff,
        mask_iou=inter / union if union else 1.0,
        min_image_iou=worst,
        n_angles=len(diffs),
        median_angle_diff=float(np.median(diffs)) if diffs else math.nan,
        max_angle_diff=float(np.max(diffs)) if diffs else math.nan,
        unmatched_plumes=unmatched,
        tolerance=tolerance,
        n_apexes=n_apexes,
        apexes_kept=apexes_kept,
        channel_shifts_px=tuple(channel_shifts),
        max_logit_excess=max(excess, 0.0),
    )
