"""Turn a reading into ConeMeasurements: angles, length, area, profile, flags, mm; ordered
along the boom (or in hint order) and numbered."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import cv2
import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob
from spraycv.geometry.candidates import BlobReading
from spraycv.geometry.confidence import pixel_scale
from spraycv.geometry.coverage import coverage_overlap, coverage_width
from spraycv.geometry.linefit import LineFit
from spraycv.geometry.plume import Plume
from spraycv.geometry.types import ConeMeasurement, Line, MeasureHints, Point, QualityFlag
from spraycv.geometry.wedge import WedgeFit, band_limits, half_angles, normal_left, width_profile

NAN = float("nan")


def empty_measurement(index: int, apex: Point | None) -> ConeMeasurement:
    """A no_spray measurement (nothing there, or nothing at a hinted apex)."""
    a = (NAN, NAN) if apex is None else (float(apex[0]), float(apex[1]))
    return ConeMeasurement(index=index, apex=a, flags=(QualityFlag.NO_SPRAY,))


def _partial_area(blob: Blob, apex: np.ndarray, n: np.ndarray, lo: float, hi: float) -> float:
    """Pixels of the blob whose lateral coordinate lies in [lo, hi] (merged plumes).

    The strip is rasterised as a polygon and intersected with the filled outline, all in
    OpenCV: a per-pixel projection in numpy cost several ms per plume on boom frames.
    """
    x0, y0 = np.floor(blob.pts.min(axis=0)).astype(int)
    x1, y1 = np.ceil(blob.pts.max(axis=0)).astype(int)
    roi = np.zeros((y1 - y0 + 1, x1 - x0 + 1), dtype=np.uint8)
    contour = (blob.pts - (x0, y0)).astype(np.int32).reshape(-1, 1, 2)
    cv2.drawContours(roi, [contour], 0, 1, thickness=-1)
    # lines t = lo and t = hi (t = (p - apex) . n), long enough to cross the whole ROI
    origin = np.asarray(apex, float) - (x0, y0)
    reach = float(np.hypot(*roi.shape)) + float(np.hypot(*origin)) + 2.0
    # fillConvexPoly takes the pixels its edges touch: pull each edge in by half a pixel
    lo, hi = max(lo + 0.5, -reach), min(hi - 0.5, reach)
    along = np.array([-n[1], n[0]], float)
    quad = [
        origin + n * t + along * s
        for t, s in ((lo, -reach), (lo, reach), (hi, reach), (hi, -reach))
    ]
    strip = np.zeros_like(roi)
    cv2.fillConvexPoly(strip, np.round(np.array(quad)).astype(np.int32), 1)
    return float(cv2.countNonZero(roi & strip))


def measure_unexplained(blob: Blob, hints: MeasureHints) -> ConeMeasurement:
    """The measurement of a blob no wedge explains: its area, no angles."""
    flags = [QualityFlag.TOO_FEW_EDGE_POINTS]
    if blob.touches_border:
        flags.append(QualityFlag.TOUCHES_BORDER)
    mm = hints.mm_per_px
    return ConeMeasurement(
        index=0,
        apex=(NAN, NAN),
        area_px=blob.area,
        area_mm2=blob.area * mm * mm if mm else NAN,
        flags=tuple(flags),
    )


def _own_extent(plume: Plume, apex: np.ndarray, u: np.ndarray) -> tuple[float, bool, float]:
    """(length L px, touches the border, area px) over this plume's own part of the blob
    (its lateral range, for merged plumes); apex, u: (2,)."""
    blob = plume.blob
    if not plume.merged:  # the extreme along the axis lies on the hull
        return float((blob.hull @ u).max() - apex @ u), blob.touches_border, blob.area
    n = normal_left(u)
    lo, hi = plume.t_range()
    rel = blob.pts - apex
    t_all = rel @ n
    own = (t_all >= lo) & (t_all <= hi)
    length = float((rel[own] @ u).max()) if own.any() else NAN
    touches = bool((~blob.usable[own]).any())
    return length, touches, _partial_area(blob, apex, n, lo, hi)


def _half_angles(fit: WedgeFit, u: np.ndarray) -> tuple[float, float]:
    """(left, right) half-angles (deg) of the fitted lines from the axis u (2,)."""
    assert fit.left is not None and fit.right is not None
    return half_angles(fit.left.direction, fit.right.direction, u)


def _fit_flags(
    fit: WedgeFit, inc: float, apex: np.ndarray, shape: tuple[int, int], cfg: GeometryConfig
) -> list[QualityFlag]:
    """Flags of a fitted wedge: poor fit (RMS, inliers, or no opening), short band, apex
    outside the image (H, W)."""
    assert fit.left is not None and fit.right is not None
    flags: list[QualityFlag] = []
    worst_rms = max(fit.left.rms, fit.right.rms) / pixel_scale(shape)
    worst_inl = min(fit.left.inlier_frac, fit.right.inlier_frac)
    if worst_rms > cfg.max_fit_rms_px or worst_inl < cfg.min_inlier_frac:
        flags.append(QualityFlag.POOR_FIT)
    if fit.short_band:
        flags.append(QualityFlag.SHORT_BAND)
    if not 0.0 < inc < 180.0 and QualityFlag.POOR_FIT not in flags:
        flags.append(QualityFlag.POOR_FIT)  # no cone angle to report: the fit says why
    h, w = shape
    if not (-0.5 <= apex[0] <= w - 0.5 and -0.5 <= apex[1] <= h - 0.5):
        flags.append(QualityFlag.APEX_OUTSIDE_IMAGE)
    return flags


def _line(fit: LineFit) -> Line:
    """The output form of a fitted boundary line."""
    return Line(tuple(map(float, fit.point)), tuple(map(float, fit.direction)))  # type: ignore[arg-type]


def measure_plume(
    plume: Plume, shape: tuple[int, int], cfg: GeometryConfig, hints: MeasureHints
) -> ConeMeasurement:
    """The measurement of one plume of an (H, W) image (docs/cone_angle.md)."""
    fit = plume.fit
    apex = np.asarray(plume.apex, dtype=np.float64)
    u = np.asarray(plume.axis, dtype=np.float64)
    length, touches, area = _own_extent(plume, apex, u)
    flags = [QualityFlag.TOUCHES_BORDER] if touches else []
    flags += [QualityFlag.PLUMES_MERGED] if plume.merged else []
    flags += [QualityFlag.AXIS_FROM_BISECTOR] if plume.axis_source == "bisector" else []
    mm = hints.mm_per_px
    common = dict(
        index=plume.index if plume.index is not None else 0,
        axis_source=plume.axis_source,
        length_px=length,
        area_px=area,
        length_mm=length * mm if mm else NAN,
        area_mm2=area * mm * mm if mm else NAN,
    )
    if fit is None or not fit.ok or fit.left is None or fit.right is None:
        n_l, n_r = (fit.n_left, fit.n_right) if fit is not None else (0, 0)
        return _without_angles(flags, QualityFlag.TOO_FEW_EDGE_POINTS, n_l, n_r, common)
    hl, hr = _half_angles(fit, u)
    inc = hl + hr
    if not 0.0 < inc < 180.0:  # the boundaries do not open away from the apex: no wedge
        return _without_angles(flags, QualityFlag.NO_WEDGE, fit.n_left, fit.n_right, common)
    flags += _fit_flags(fit, inc, apex, shape, cfg)
    height, spacing = hints.nozzle_height_mm, hints.nozzle_spacing_mm
    cover = coverage_width(inc, height) if height else NAN
    return ConeMeasurement(
        apex=(float(apex[0]), float(apex[1])),
        axis=(float(u[0]), float(u[1])),
        tilt_deg=math.degrees(math.atan2(float(u[0]), float(u[1]))),
        left_line=_line(fit.left),
        right_line=_line(fit.right),
        half_angle_left_deg=hl,
        half_angle_right_deg=hr,
        included_angle_deg=inc,
        band=band_limits(length, cfg.band, hints.mm_per_px),
        width_profile=width_profile(plume.blob.pts, apex, u, cfg.profile_step_px, plume.t_range()),
        symmetry_index=(hr - hl) / inc,
        fit_rms_left_px=float(fit.left.rms),
        fit_rms_right_px=float(fit.right.rms),
        n_edge_points_left=fit.n_left,
        n_edge_points_right=fit.n_right,
        flags=tuple(flags),
        coverage_width_mm=cover,
        overlap_mm=coverage_overlap(cover, spacing) if spacing and math.isfinite(cover) else NAN,
        **common,  # type: ignore[arg-type]
    )


def _without_angles(
    flags: list[QualityFlag], why: QualityFlag, n_left: int, n_right: int, common: dict
) -> ConeMeasurement:
    """A plume's measurement without angles or apex (so no plume is reported): `why` says
    why, after its other flags."""
    return ConeMeasurement(
        apex=(NAN, NAN),
        n_edge_points_left=n_left,
        n_edge_points_right=n_right,
        flags=(*flags, why),
        **common,
    )


def finish(
    results: list[ConeMeasurement], hints: MeasureHints, reindex: bool
) -> list[ConeMeasurement]:
    """Number the measurements along the boom and add the overlap with the next nozzle."""
    out = [
        dataclasses.replace(r, index=i) if reindex and r.index != i else r
        for i, r in enumerate(results)
    ]
    spacing = hints.nozzle_spacing_mm
    if spacing is None:
        return out
    for i in range(len(out) - 1):
        a, b = out[i].coverage_width_mm, out[i + 1].coverage_width_mm
        if math.isfinite(a) and math.isfinite(b):
            out[i] = dataclasses.replace(out[i], overlap_next_mm=coverage_overlap(a, spacing, b))
    return out


def boom_direction(plumes: Sequence[Plume], hint_axis: np.ndarray | None) -> np.ndarray:
    """The direction (2,) the measurements are ordered along: -n_left of the hint axis, or
    of the plumes' mean axis, or of image-down (image left to right for sprays pointing
    down)."""
    axes = [p.axis for p in plumes if np.all(np.isfinite(p.axis))]
    u = hint_axis if hint_axis is not None else (np.mean(axes, axis=0) if axes else None)
    if u is None or np.hypot(*u) < 1e-9:
        u = np.array([0.0, 1.0])
    return -normal_left(u / np.hypot(*u))


def report_along_boom(
    reading: BlobReading,
    shape: tuple[int, int],
    cfg: GeometryConfig,
    hints: MeasureHints,
    hint_axis: np.ndarray | None,
) -> list[ConeMeasurement]:
    """One measurement per plume and per unexplained blob of an (H, W) frame, ordered along
    the boom (boom_direction) and numbered; a single no_spray measurement for none."""
    key = boom_direction(reading.plumes, hint_axis)
    items = [(float(p.apex @ key), measure_plume(p, shape, cfg, hints)) for p in reading.plumes]
    items += [(float(b.centroid @ key), measure_unexplained(b, hints)) for b in reading.unexplained]
    items.sort(key=lambda kv: kv[0])
    results = [r for _, r in items] or [empty_measurement(0, None)]
    return finish(results, hints, reindex=True)


def report_at_hint_apexes(
    plumes: Sequence[Plume],
    missing: Sequence[int],
    apexes: Sequence[Point],
    shape: tuple[int, int],
    cfg: GeometryConfig,
    hints: MeasureHints,
) -> list[ConeMeasurement]:
    """One measurement per hint apex, in hint order: its plume's, or no_spray for the hint
    indices `missing` (nothing sprays there)."""
    results = [measure_plume(p, shape, cfg, hints) for p in plumes]
    results += [empty_measurement(i, apexes[i]) for i in missing]
    results.sort(key=lambda r: r.index)
    return finish(results, hints, reindex=False)
