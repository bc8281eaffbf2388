"""How far a cone reading can be trusted: evidence from the fit, the image and the apex head,
turned into a confidence in [0, 1] and, below a threshold, the reasons it is unreliable.

A reading is a plume only if its boundaries are straight (fit residuals), visible in the
image as an edge between spray and background (edge contrast), issue from where a nozzle is
(apex-head support, apex inside the image), open away from the apex (widening, both sides
ahead of the orifice, one on each side of the axis), have sides seen inside the frame rather
than along its edge, and, with a refiner, be spray on its near-orifice crop (crop support).
Each piece of evidence gives a score in [0, 1]; the confidence is their product, so one clear
failure is enough. Pure numpy; spraycv.measure.Measurer applies it to every reading.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import cv2
import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.linefit import intersect
from spraycv.geometry.tuning import TUNING
from spraycv.geometry.types import ConeMeasurement, QualityFlag
from spraycv.geometry.wedge import band_limits

NAN = float("nan")


@dataclass(frozen=True)
class Evidence:
    """What one reading rests on (NaN: not available for this input)."""

    fit_rms_px: float  # the worse side's inlier RMS, in reference pixels (pixel_scale)
    edge_contrast: float  # spray-background step across the weaker line, share of the range
    apex_support_px: float  # apex to the nearest apex-head peak (inf: no peak at all)
    apex_inside: bool
    widening: float  # the width's growth along the band over the growth the angles imply
    widest_half_angle_deg: float  # a side at 90 deg or more from the axis points back
    narrowest_half_angle_deg: float  # below 0: a side on the other side of the axis
    crop_support: float = NAN  # the refiner's spray probability on the plume's core
    sides_meet_frac: float = NAN  # apex to where the two lines meet, over L (inf: parallel)
    on_frame_edge_frac: float = NAN  # the larger share of a side's band along the frame's edge


GRAY_WEIGHTS = np.array([0.114, 0.587, 0.299])  # B, G, R: cv2.COLOR_BGR2GRAY's


def _gray_range(image: np.ndarray) -> float:
    """The grey range (p0.5 to p99.5) of every fourth pixel of an (H, W[, 3]) image."""
    rows = image[::4]  # rows OpenCV reads in place; a copy of every fourth pixel is slow
    gray = rows if rows.ndim == 2 else cv2.cvtColor(rows, cv2.COLOR_BGR2GRAY)  # per pixel
    lo, hi = np.percentile(gray[:, ::4], (0.5, 99.5))
    return max(float(hi - lo), 1.0)


def _sample(image: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Bilinear grey levels of an (H, W[, 3]) image at (N, 2) points (x, y); NaN outside.

    Only the four neighbours of each point are read: a grey copy of a 20-megapixel photo
    would cost 20-80 MB for 48 samples."""
    h, w = image.shape[:2]
    inside = (pts[:, 0] >= 0) & (pts[:, 0] <= w - 1) & (pts[:, 1] >= 0) & (pts[:, 1] <= h - 1)
    out = np.full(len(pts), np.nan, np.float32)
    if not inside.any():
        return out
    x, y = pts[inside, 0], pts[inside, 1]
    x0 = np.minimum(x.astype(np.int64), max(w - 2, 0))
    y0 = np.minimum(y.astype(np.int64), max(h - 2, 0))
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    pixel = [image[yy, xx].reshape(len(x), -1).astype(np.float64) for yy, xx in
             ((y0, x0), (y0, x1), (y1, x0), (y1, x1))]  # fmt: skip
    value = (pixel[0] * (1 - fx) + pixel[1] * fx) * (1 - fy) + (
        pixel[2] * (1 - fx) + pixel[3] * fx
    ) * fy
    out[inside] = value[:, 0] if value.shape[1] == 1 else value @ GRAY_WEIGHTS
    return out


def band_points(
    m: ConeMeasurement, direction: np.ndarray, band: tuple[float, float]
) -> np.ndarray | None:
    """(24, 2) points of the line from `m`'s apex along `direction`, over `band` (px along
    the axis); None where the band is not finite or the line does not run ahead of the apex."""
    u = np.asarray(m.axis, float)
    along = float(direction @ u)
    if not (along > 1e-6 and np.isfinite(band).all()):
        return None
    s = np.linspace(band[0], band[1], 24) / along  # distance along the line
    return np.asarray(m.apex, float) + s[:, None] * direction


def side_contrast(
    image: np.ndarray, m: ConeMeasurement, direction: np.ndarray, offset_px: float
) -> float:
    """Median |inside - outside| grey step across one boundary line over the band."""
    on_line = band_points(m, direction, m.band)
    if on_line is None:
        return NAN
    u = np.asarray(m.axis, float)
    away = direction - u * float(direction @ u)  # the line's side of the axis
    normal = np.array([-direction[1], direction[0]])
    normal = normal if normal @ away >= 0 else -normal
    inside = _sample(image, on_line - offset_px * normal)
    outside = _sample(image, on_line + offset_px * normal)
    step = np.abs(inside - outside)
    step = step[np.isfinite(step)]
    return float(np.median(step)) if step.size >= 6 else NAN


def edge_contrast(image: np.ndarray, m: ConeMeasurement) -> float:
    """The weaker side's step, as a share of the image's grey range (p0.5 to p99.5)."""
    span = _gray_range(image)
    offset = max(TUNING.contrast_offset_px, TUNING.contrast_offset_frac * m.length_px)
    sides = [
        side_contrast(image, m, np.asarray(line.direction, float), offset)
        for line in (m.left_line, m.right_line)
    ]
    return min(sides) / span if all(np.isfinite(sides)) else NAN


def widening(m: ConeMeasurement) -> float:
    """Slope of width over axial distance in the band, over tan(left) + tan(right) (NaN for
    a plume split out of a merged blob, whose profile its neighbours cut)."""
    prof = m.width_profile
    if prof.size == 0 or not np.isfinite(m.band).all() or m.has(QualityFlag.PLUMES_MERGED):
        return NAN
    in_band = (prof[:, 0] >= m.band[0]) & (prof[:, 0] <= m.band[1])
    if in_band.sum() < 4:
        return NAN
    slope = np.polyfit(prof[in_band, 0], prof[in_band, 1], 1)[0]
    expected = math.tan(math.radians(m.half_angle_left_deg)) + math.tan(
        math.radians(m.half_angle_right_deg)
    )
    return float(slope / expected) if expected > 1e-6 else NAN


def sides_meet_frac(m: ConeMeasurement) -> float:
    """How far from the reported apex the two boundary lines meet, as a share of L: 0 for
    a consistent reading; the refiner keeps the coarse apex where its sides meet too far
    from it (spraycv.refine.stage.refined), and those sides then bound some other wedge
    (inf: parallel lines; NaN: no lines)."""
    if m.left_line is None or m.right_line is None or not m.length_px > 0:
        return NAN
    (p1, d1), (p2, d2) = (
        (np.asarray(line.point, float), np.asarray(line.direction, float))
        for line in (m.left_line, m.right_line)
    )
    meet = intersect(p1, d1, p2, d2)
    if meet is None:
        return math.inf
    return float(np.hypot(*(meet - np.asarray(m.apex, float)))) / m.length_px


def on_frame_edge_frac(
    m: ConeMeasurement, shape: tuple[int, int], band: tuple[float, float]
) -> float:
    """The larger share, of the two sides, of a side's points over `band` (px along the
    axis) that lie within TUNING.frame_edge_frac of the frame's shorter side from its edge,
    inside or out: near 1 where a side runs along the edge, so that what was read there is
    where the frame cuts the spray, not its boundary (a boom's last nozzle cut by the frame;
    experiments row 215). NaN without lines or band."""
    if m.left_line is None or m.right_line is None:
        return NAN
    h, w = shape
    near = TUNING.frame_edge_frac * min(shape)
    shares = []
    for line in (m.left_line, m.right_line):
        pts = band_points(m, np.asarray(line.direction, float), band)
        if pts is None:
            return NAN
        to_edge = np.minimum.reduce(
            [pts[:, 0] + 0.5, w - 0.5 - pts[:, 0], pts[:, 1] + 0.5, h - 0.5 - pts[:, 1]]
        )  # signed: below 0 outside the frame
        shares.append(float(np.mean(np.abs(to_edge) <= near)))
    return max(shares)


def gather(
    m: ConeMeasurement,
    shape: tuple[int, int],
    image: np.ndarray | None = None,
    apexes: np.ndarray | None = None,
    crop_support: float = NAN,
    side_band: tuple[float, float] | None = None,
) -> Evidence:
    """The evidence of one measured reading (one with a finite angle); `crop_support` is the
    refiner's (spraycv.refine.stage.crop_support), NaN without one; `side_band` is where its
    sides are checked against the frame's edge (default: its own band)."""
    h, w = shape
    x, y = m.apex
    if apexes is None:
        support = NAN
    elif len(apexes) == 0:
        support = math.inf
    else:
        support = float(np.min(np.hypot(apexes[:, 0] - x, apexes[:, 1] - y)))
    return Evidence(
        fit_rms_px=max(m.fit_rms_left_px, m.fit_rms_right_px) / pixel_scale(shape),
        edge_contrast=edge_contrast(image, m) if image is not None else NAN,
        apex_support_px=support,
        apex_inside=bool(-0.5 <= x <= w - 0.5 and -0.5 <= y <= h - 0.5),
        widening=widening(m),
        widest_half_angle_deg=max(m.half_angle_left_deg, m.half_angle_right_deg),
        narrowest_half_angle_deg=min(m.half_angle_left_deg, m.half_angle_right_deg),
        crop_support=crop_support,
        sides_meet_frac=sides_meet_frac(m),
        on_frame_edge_frac=on_frame_edge_frac(m, shape, side_band or m.band),
    )


def pixel_scale(shape: tuple[int, int]) -> float:
    """A frame's pixels per pixel of the reference frame the fit limits were set on
    (TUNING.reference_short_px on its shorter side); 1 for a frame no larger. The same scene
    photographed at 4x the resolution then fits its boundaries as well, not 4x worse."""
    return max(1.0, min(shape) / TUNING.reference_short_px)


def _ramp(value: float, none: float, clear: float) -> float:
    """0 at or below `none`, 1 at or above `clear`, smooth between; 1 for NaN (no evidence
    either way: e.g. a mask given without its image)."""
    if not math.isfinite(value):
        return 1.0
    t = min(max((value - none) / (clear - none), 0.0), 1.0)
    return t * t * (3 - 2 * t)


def _support(distance_px: float, length_px: float) -> float:
    if math.isnan(distance_px):  # no apex head: nothing to ask it
        return 1.0
    radius = max(TUNING.support_radius_px, TUNING.support_radius_frac * length_px)
    excess = max(distance_px / radius - 1.0, 0.0)  # inf (no peak at all) gives 0
    return math.exp(-(excess**2) / TUNING.support_falloff)


def scores(evidence: Evidence, length_px: float, cfg: GeometryConfig) -> dict[str, float]:
    """One score in [0, 1] per reason a reading may be unreliable."""
    fit = (evidence.fit_rms_px / cfg.max_fit_rms_px) ** TUNING.fit_rms_power
    return {
        "poor_fit": 1.0 / (1.0 + fit) if math.isfinite(fit) else 0.0,
        "low_edge_contrast": _ramp(
            evidence.edge_contrast, TUNING.contrast_none, TUNING.contrast_clear
        ),
        "no_apex_support": _support(evidence.apex_support_px, length_px),
        "apex_outside_image": 1.0 if evidence.apex_inside else 0.0,
        "does_not_widen": _ramp(evidence.widening, TUNING.widening_none, TUNING.widening_clear),
        # a spray leaves its orifice forwards: a boundary at 90 deg or more from the axis
        # runs back past the nozzle, so the reading took something else for a side
        "side_behind_apex": 1.0 if evidence.widest_half_angle_deg < 90.0 else 0.0,
        # both sides on one side of the axis: the lines do not bound the plume the axis was
        # read from (a refined crop that found one edge twice)
        "side_across_axis": (
            1.0 if evidence.narrowest_half_angle_deg > -TUNING.across_axis_deg else 0.0
        ),
        # the lines meet elsewhere than at the apex: the angle between them is not the
        # plume's (a refined crop whose sides disagree with its apex: experiments row 120)
        "sides_miss_apex": 0.0 if evidence.sides_meet_frac > TUNING.sides_meet_frac else 1.0,
        # a side along the frame's edge over half the band is where the frame cuts the spray
        "side_on_frame_edge": 0.0 if evidence.on_frame_edge_frac > 0.5 else 1.0,
        "no_spray_in_crop": _ramp(
            evidence.crop_support, TUNING.crop_support_none, TUNING.crop_support_clear
        ),
    }


def side_band(m: ConeMeasurement, cfg: GeometryConfig) -> tuple[float, float]:
    """`m`'s band, or for a plume recovered at an apex peak, read from the refiner's crop
    alone and so without one (spraycv.refine.recover), the band its length gives."""
    if np.isfinite(m.band).all() or not m.length_px > 0:
        return m.band
    return band_limits(m.length_px, cfg.band, None)


def assess(
    m: ConeMeasurement,
    shape: tuple[int, int],
    cfg: GeometryConfig,
    image: np.ndarray | None = None,
    apexes: np.ndarray | None = None,
    crop_support: float = NAN,
) -> ConeMeasurement:
    """`m` with its confidence and, when it is not to be trusted, the reasons why.

    A reading with no angle is left as it is. Reasons are the pieces of evidence scoring below
    TUNING.failing_score; a fit residual above cfg.max_fit_rms_px or an apex outside the
    image is always one, so such a reading is never reported as reliable.
    """
    if not m.ok:
        return m
    evidence = gather(m, shape, image, apexes, crop_support, side_band(m, cfg))
    score = scores(evidence, m.length_px, cfg)
    confidence = float(np.prod(list(score.values())))
    reasons = [name for name, value in score.items() if value < TUNING.failing_score]
    if not reasons and confidence < cfg.min_confidence:
        reasons = [min(score, key=score.__getitem__)]  # the weakest piece, named
    return dataclasses.replace(m, confidence=confidence, unreliable=";".join(reasons))
