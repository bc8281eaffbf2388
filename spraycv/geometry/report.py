"""Turn a fitted plume into a ConeMeasurement: angles, length, area, profile, flags, mm."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import cv2
import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob
from spraycv.geometry.coverage import coverage_overlap, coverage_width
from spraycv.geometry.types import ConeMeasurement, Line, MeasureHints, QualityFlag
from spraycv.geometry.wedge import (
    FitOptions,
    WedgeFit,
    band_limits,
    fit_wedge,
    normal_left,
    width_profile,
)

NAN = float("nan")


@dataclass
class Plume:
    """Working record of one plume while the frame is measured."""

    blob: Blob
    apex: np.ndarray  # seed, then the fitted apex
    axis: np.ndarray
    fixed_axis: bool
    axis_source: str  # "hint" | "boom" | "bisector"
    crotch_left: np.ndarray | None = None
    crotch_right: np.ndarray | None = None
    merged: bool = False
    index: int | None = None  # hint order, when apexes are hinted
    fit: WedgeFit | None = None

    def refit(self, opts: FitOptions) -> None:
        """Fit the wedge from the current apex/axis; keep the result's apex/axis if it worked."""
        self.fit = fit_wedge(
            self.blob.fit_pts,
            self.blob.hull,
            self.apex,
            self.axis,
            self.fixed_axis,
            opts,
            self.crotch_left,
            self.crotch_right,
            self.blob.pts if self.merged else None,
        )
        if self.fit.ok:
            self.apex, self.axis = self.fit.apex, self.fit.axis

    def t_range(self) -> tuple[float, float]:
        """This plume's lateral range (t from the apex) inside a merged component."""
        n = normal_left(self.axis)
        hi = math.inf if self.crotch_left is None else float((self.crotch_left - self.apex) @ n)
        lo = -math.inf if self.crotch_right is None else float((self.crotch_right - self.apex) @ n)
        return lo, hi


def empty_measurement(index: int, apex: tuple[float, float] | None) -> ConeMeasurement:
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


def _shapeless(blob: Blob, cfg: GeometryConfig, hints: MeasureHints) -> ConeMeasurement:
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


def build_measurement(
    plume: Plume | Blob, shape: tuple[int, int], cfg: GeometryConfig, hints: MeasureHints
) -> ConeMeasurement:
    """The measurement of one plume (or of a blob where no wedge could be found)."""
    if isinstance(plume, Blob):
        return _shapeless(plume, cfg, hints)
    blob, fit = plume.blob, plume.fit
    apex = np.asarray(plume.apex, dtype=np.float64)
    u = np.asarray(plume.axis, dtype=np.float64)
    n = normal_left(u)
    lo, hi = plume.t_range()
    flags: list[QualityFlag] = []
    # length and border contact over this plume's own part of the contour
    if plume.merged:
        rel = blob.pts - apex
        t_all = rel @ n
        own = (t_all >= lo) & (t_all <= hi)
        length = float((rel[own] @ u).max()) if own.any() else NAN
        touches = bool((~blob.usable[own]).any())
    else:  # the extreme along the axis lies on the hull
        length = float((blob.hull @ u).max() - apex @ u)
        touches = blob.touches_border
    if touches:
        flags.append(QualityFlag.TOUCHES_BORDER)
    area = _partial_area(blob, apex, n, lo, hi) if plume.merged else blob.area
    if plume.merged:
        flags.append(QualityFlag.PLUMES_MERGED)
    if plume.axis_source == "bisector":
        flags.append(QualityFlag.AXIS_FROM_BISECTOR)
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
        flags.append(QualityFlag.TOO_FEW_EDGE_POINTS)
        n_l, n_r = (fit.n_left, fit.n_right) if fit is not None else (0, 0)
        return ConeMeasurement(
            apex=(NAN, NAN),
            n_edge_points_left=n_l,
            n_edge_points_right=n_r,
            flags=tuple(flags),
            **common,  # type: ignore[arg-type]
        )
    dl, dr = fit.left.direction, fit.right.direction
    hl = math.degrees(math.atan2(float(dl @ n), float(dl @ u)))
    hr = math.degrees(math.atan2(-float(dr @ n), float(dr @ u)))
    inc = hl + hr
    worst_rms = max(fit.left.rms, fit.right.rms)
    worst_inl = min(fit.left.inlier_frac, fit.right.inlier_frac)
    if worst_rms > cfg.max_fit_rms_px or worst_inl < cfg.min_inlier_frac:
        flags.append(QualityFlag.POOR_FIT)
    if fit.short_band:
        flags.append(QualityFlag.SHORT_BAND)
    if not 0.0 < inc < 180.0:
        # the boundaries do not open away from the apex (a stripe, a line, crossing fits):
        # no cone angle to report, and the fit says why
        if QualityFlag.POOR_FIT not in flags:
            flags.append(QualityFlag.POOR_FIT)
        hl = hr = inc = NAN
    h, w = shape
    if not (-0.5 <= apex[0] <= w - 0.5 and -0.5 <= apex[1] <= h - 0.5):
        flags.append(QualityFlag.APEX_OUTSIDE_IMAGE)
    height, spacing = hints.nozzle_height_mm, hints.nozzle_spacing_mm
    cover = coverage_width(inc, height) if height and 0 <= inc < 180 else NAN
    profile = width_profile(blob.pts, apex, u, cfg.profile_step_px, (lo, hi))
    return ConeMeasurement(
        apex=(float(apex[0]), float(apex[1])),
        axis=(float(u[0]), float(u[1])),
        tilt_deg=math.degrees(math.atan2(float(u[0]), float(u[1]))),
        left_line=Line(tuple(map(float, fit.left.point)), tuple(map(float, dl))),  # type: ignore[arg-type]
        right_line=Line(tuple(map(float, fit.right.point)), tuple(map(float, dr))),  # type: ignore[arg-type]
        half_angle_left_deg=hl,
        half_angle_right_deg=hr,
        included_angle_deg=inc,
        band=band_limits(length, cfg.band, hints.mm_per_px),
        width_profile=profile,
        symmetry_index=(hr - hl) / inc if inc != 0 else NAN,
        fit_rms_left_px=float(fit.left.rms),
        fit_rms_right_px=float(fit.right.rms),
        n_edge_points_left=fit.n_left,
        n_edge_points_right=fit.n_right,
        flags=tuple(flags),
        coverage_width_mm=cover,
        overlap_mm=coverage_overlap(cover, spacing) if spacing and math.isfinite(cover) else NAN,
        **common,  # type: ignore[arg-type]
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
