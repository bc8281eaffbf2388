"""The refinement stage: coarse measurements + the full-resolution image -> refined ones."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from spraycv.geometry.boomline import apex_line_axis
from spraycv.geometry.coverage import coverage_width
from spraycv.geometry.linefit import LineFit, intersect
from spraycv.geometry.types import ConeMeasurement, Line, MeasureHints
from spraycv.geometry.wedge import half_angles
from spraycv.refine.apex import channel_apex
from spraycv.refine.edges import APEX_BAND, APEX_SOURCES, READ_BAND, side_lines
from spraycv.refine.pose import (
    CropPose,
    crop_pose,
    pose_transform,
    warp_crop,
    wedge_mask,
    wedge_support,
)
from spraycv.runtime.processing import preprocess

PASSES = 2  # reading again at the pose the first reading found: MAE 1.90 -> 1.76 on
# val_std (docs/experiments.md); a third pass adds nothing, a mirrored crop little for its cost
MOVED_FRAC, MOVED_DEG = 0.03, 2.0  # a plume is read again only where its last reading
# moved the pose: its apex by more than this share of L, or its axis or widest side by more
# than this many degrees (elsewhere the next crop would be nearly the same one); 1.5 % and
# 1 deg read val_std no better for 15 % more time (docs/experiments.md, row 23)
SUPPORT_CORE = 0.7  # the crop's support for a plume is read on this share of its narrower
# side's half angle, in the band: the core, where a plume is spray whatever its edge's blur
APEX_FROM = "mean"  # the apex both sides are pinned to: the mean of the edges' and the apex
# channel's where the refiner has one (held-out MAE 1.132 -> 1.095, median 0.771 -> 0.734;
# pooled over three draws median 0.816 -> 0.785; the channel alone reads the validation sets
# with a wider tail and a false plume on dim frames: experiments row 115); a refiner without
# the channel reads from the edges alone
BOOM_TURN_DEG = 5.0  # the boom's axis re-drawn through the refined apexes turns by less: a
# coarse apex is a few pixels off, and a boom's nozzles are a hundred or more apart
APEX_MOVE_FRAC = 0.25  # a refined apex further than this share of L from the coarse one is
# not trusted (near-parallel sides make the intersection ill-conditioned): the coarse one stays


def pose_of(m: ConeMeasurement) -> CropPose | None:
    """The crop pose of a measured plume, None when it has no angles to refine."""
    if not (m.ok and math.isfinite(m.length_px) and m.length_px > 4 and np.isfinite(m.apex).all()):
        return None
    widest = max(m.half_angle_left_deg, m.half_angle_right_deg)
    return crop_pose(m.apex, m.axis, m.length_px, widest)


def crop_support(
    prob: np.ndarray, pose: CropPose, half_angle_deg: float, band: tuple[float, float]
) -> float:
    """How much of a plume's core the refiner sees as spray on its (H, W) crop probability:
    near 1 on a plume, near 0 where the coarse reading found one in nothing (NaN: no core)."""
    core = wedge_mask(pose, prob.shape, SUPPORT_CORE * half_angle_deg, band)
    return wedge_support(prob, core)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Probabilities of logits, clipped so that no exp overflows."""
    return 1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))


class Refiner:
    """Re-reads each plume's boundaries on a canonical crop segmented by `predictor` (any
    spraycv runtime backend whose input size is the crop size)."""

    def __init__(
        self,
        predictor,
        band: tuple[float, float] = READ_BAND,
        flip: bool = False,
        passes: int = PASSES,
        moved: tuple[float, float] = (MOVED_FRAC, MOVED_DEG),
        apex_band: tuple[float, float] | None = APEX_BAND,
        apex_from: str = APEX_FROM,
    ):
        if apex_from not in APEX_SOURCES:
            known = ", ".join(sorted(APEX_SOURCES))
            raise ValueError(f"unknown apex source {apex_from!r}: use one of {known}")
        self.predictor = predictor
        self.size = tuple(predictor.io.input_size)
        self.band = band
        self.apex_band = apex_band  # where the sides' meeting point is read (None: free fits)
        self.flip = flip  # average each crop with its mirror (the axis is the mirror line)
        self.passes = passes  # re-crop at the refined pose and read again
        self.moved = moved
        self.apex_from = apex_from  # edges, the apex channel or both (APEX_SOURCES)

    @classmethod
    def load(cls, weights: Path, threads: int | None = None) -> Refiner:
        from spraycv.runtime.predictor import load_predictor

        return cls(load_predictor(Path(weights), threads=threads))

    def crop_probabilities(
        self, image: np.ndarray, poses: Sequence[CropPose]
    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray | None]]:
        """(P, H, W) crop probabilities, the P crop -> image transforms and the P apexes
        (2,) in the image read on the apex channel (None without one, or where it is
        unsure); one batch."""
        transforms = [pose_transform(p, self.size) for p in poses]
        crops = [warp_crop(image, t, self.size) for t in transforms]
        n = len(crops)
        mirrored = [c[:, ::-1] for c in crops] if self.flip else []
        logits = self.predictor.infer(preprocess([*crops, *mirrored], self.predictor.io))
        probs = sigmoid(logits[:n, 0])
        if self.flip:
            probs = 0.5 * (probs + sigmoid(logits[n:, 0, :, ::-1]))
        apexes = [channel_apex(logits[k, 1], transforms[k]) if logits.shape[1] > 1 else None
                  for k in range(n)]  # fmt: skip
        return probs, transforms, apexes

    def refine(
        self,
        image: np.ndarray,
        measurements: Sequence[ConeMeasurement],
        hints: MeasureHints | None = None,
    ) -> list[ConeMeasurement]:
        """The measurements with their lines, angles and apex re-read on the crops (those
        without angles, or whose crop gives too few edge points, are kept as they were)."""
        return self.refine_with_support(image, measurements, hints)[0]

    def refine_with_support(
        self,
        image: np.ndarray,
        measurements: Sequence[ConeMeasurement],
        hints: MeasureHints | None = None,
    ) -> tuple[list[ConeMeasurement], list[float]]:
        """`refine`'s measurements, and for each the support of its last crop for a plume
        (`crop_support`; NaN for those without angles, which are not cropped)."""
        out = list(measurements)
        support = [math.nan] * len(out)
        todo = [i for i, m in enumerate(out) if pose_of(m) is not None]
        for _ in range(self.passes):
            if not todo:
                break
            before = [out[i] for i in todo]
            self._refine_at(image, out, support, todo, hints)
            todo = [i for i, m in zip(todo, before, strict=True) if self._moved(m, out[i])]
        return on_refined_boom(out), support

    def _moved(self, before: ConeMeasurement, after: ConeMeasurement) -> bool:
        """Whether a reading moved the crop pose enough for the next crop to differ."""
        frac, deg = self.moved
        shift = float(np.hypot(*np.subtract(after.apex, before.apex)))
        turn = math.degrees(math.acos(min(1.0, abs(float(np.dot(after.axis, before.axis))))))
        widest = [max(m.half_angle_left_deg, m.half_angle_right_deg) for m in (before, after)]
        return shift > frac * before.length_px or turn > deg or abs(widest[1] - widest[0]) > deg

    def _refine_at(
        self,
        image: np.ndarray,
        out: list[ConeMeasurement],
        support: list[float],
        todo: Sequence[int],
        hints: MeasureHints | None,
    ) -> None:
        """Re-read the measurements out[i] for i in todo, and their support, in place (one
        batch of crops)."""
        poses = [pose_of(out[i]) for i in todo]
        probs, transforms, apexes = self.crop_probabilities(image, poses)
        for k, i in enumerate(todo):
            core = min(out[i].half_angle_left_deg, out[i].half_angle_right_deg)
            support[i] = crop_support(probs[k], poses[k], core, self.band)
            left, right = side_lines(probs[k], transforms[k], self.band, self.apex_band,
                                     apexes[k], self.apex_from)  # fmt: skip
            if left is not None and right is not None:
                out[i] = refined(out[i], left, right, image.shape[:2], hints)


def on_refined_boom(
    measurements: Sequence[ConeMeasurement], max_turn_deg: float = BOOM_TURN_DEG
) -> list[ConeMeasurement]:
    """The readings that share a boom's axis (`axis_source` "boom") turned to the normal of
    the line through their refined apexes. The coarse geometry drew that line through the
    apexes it read on the network's mask, a few pixels apart from the true ones (a 2 px
    error over a 150 px pitch tilts it by 0.8 deg); the refined apexes are read near the
    orifice at full resolution. Only the axis moves, and with it how the included angle
    splits into its left and right halves (the symmetry); unchanged where fewer than two
    readings share the axis, their apexes coincide, or it would turn by max_turn_deg or
    more (a refined apex that ran off)."""
    out = list(measurements)
    members = [i for i, m in enumerate(out) if m.axis_source == "boom" and _has_sides(m)]
    if len(members) < 2:
        return out
    apexes = np.array([out[i].apex for i in members], dtype=np.float64)
    mean_axis = np.mean([out[i].axis for i in members], axis=0)
    mean_axis /= np.linalg.norm(mean_axis)
    normal = apex_line_axis(apexes, mean_axis, math.cos(math.radians(max_turn_deg)))
    if normal is None:
        return out
    for i in members:
        out[i] = with_axis(out[i], normal)
    return out


def _has_sides(m: ConeMeasurement) -> bool:
    """Whether `m` has an angle and both its lines."""
    lines = (*m.left_line.direction, *m.right_line.direction)
    return m.ok and bool(np.isfinite(lines).all())


def with_axis(m: ConeMeasurement, u: np.ndarray) -> ConeMeasurement:
    """`m` with the unit axis u (2,): its tilt and the halves of its included angle (the
    angles of its lines from u) read again; `m` itself where u does not lie between them."""
    dl, dr = np.asarray(m.left_line.direction), np.asarray(m.right_line.direction)
    hl, hr = half_angles(dl, dr, u)
    if not (hl > 0.0 and hr > 0.0):  # NaN too
        return m
    return dataclasses.replace(
        m,
        axis=(float(u[0]), float(u[1])),
        tilt_deg=math.degrees(math.atan2(float(u[0]), float(u[1]))),
        half_angle_left_deg=hl,
        half_angle_right_deg=hr,
        symmetry_index=(hr - hl) / (hl + hr),
    )


def refined(
    m: ConeMeasurement,
    left: LineFit,
    right: LineFit,
    shape: tuple[int, int],
    hints: MeasureHints | None,
) -> ConeMeasurement:
    """`m` with the refined boundary lines, its angles, apex and coverage recomputed."""
    coarse_apex = np.asarray(m.apex, dtype=np.float64)
    apex = intersect(left.point, left.direction, right.point, right.direction)
    if apex is None or np.linalg.norm(apex - coarse_apex) > APEX_MOVE_FRAC * m.length_px:
        apex = coarse_apex
    dl, dr = left.direction, right.direction
    u = np.asarray(m.axis, dtype=np.float64)
    if m.axis_source == "bisector":
        u = (dl + dr) / np.linalg.norm(dl + dr)
    hl, hr = half_angles(dl, dr, u)
    inc = hl + hr
    if not 0.0 < inc < 180.0:
        return m
    height = hints.nozzle_height_mm if hints else None
    return dataclasses.replace(
        m,
        apex=(float(apex[0]), float(apex[1])),
        axis=(float(u[0]), float(u[1])),
        tilt_deg=math.degrees(math.atan2(float(u[0]), float(u[1]))),
        left_line=Line(tuple(map(float, left.point)), tuple(map(float, dl))),  # type: ignore[arg-type]
        right_line=Line(tuple(map(float, right.point)), tuple(map(float, dr))),  # type: ignore[arg-type]
        half_angle_left_deg=hl,
        half_angle_right_deg=hr,
        included_angle_deg=inc,
        symmetry_index=(hr - hl) / inc,
        fit_rms_left_px=float(left.rms),
        fit_rms_right_px=float(right.rms),
        n_edge_points_left=left.n_points,
        n_edge_points_right=right.n_points,
        coverage_width_mm=coverage_width(inc, height) if height else m.coverage_width_mm,
    )
