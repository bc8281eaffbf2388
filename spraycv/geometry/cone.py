"""measure_cones: binary spray mask -> one ConeMeasurement per plume (docs/cone_angle.md).

Pipeline: validate -> morphology -> components (outer contours) -> per component, apex and
axis (hints, or a search over hull corners) -> split merged plumes (V minima of the back
profile) -> robust boundary fits in the band, apex = their intersection -> boom axis (the
normal of the line through the apexes) when two or more plumes point the same way -> refit
-> measurements sorted along the boom.
"""

from __future__ import annotations

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob, clean_mask, crotches_between, find_blobs
from spraycv.geometry.boom import apply_boom, boom_normal, retry_with_boom
from spraycv.geometry.reading import read_blobs
from spraycv.geometry.report import Plume, build_measurement, empty_measurement, finish
from spraycv.geometry.search import LikelyApexes
from spraycv.geometry.types import ConeMeasurement, MeasureHints
from spraycv.geometry.validate import validate_mask
from spraycv.geometry.wedge import FitOptions, normal_left


def _options(cfg: GeometryConfig, hints: MeasureHints) -> FitOptions:
    return FitOptions.of(cfg, hints.mm_per_px)


def _plumes_hinted(
    blobs: list[Blob],
    apexes: list[tuple[float, float]],
    hint_axis: np.ndarray | None,
    cfg: GeometryConfig,
) -> tuple[list[Plume], list[int]]:
    """One plume per hint apex that lies on a blob; returns (plumes, hint indices with none)."""
    pts = np.asarray(apexes, dtype=np.float64)
    owner = np.full(len(pts), -1)
    best = np.full(len(pts), np.inf)
    for k, blob in enumerate(blobs):
        d = np.hypot(pts[:, None, 0] - blob.pts[None, :, 0], pts[:, None, 1] - blob.pts[None, :, 1])
        dmin = d.min(axis=1)
        take = dmin < best
        owner[take], best[take] = k, dmin[take]
    owner[best > cfg.hint_apex_tol_px] = -1
    axis, source, fixed = hint_axis, "hint", True
    if axis is None and blobs and len(pts) >= 2 and np.ptp(pts, axis=0).max() > 1.0:
        axis = boom_normal(pts, [b.centroid for b in blobs])
        source = "boom"
    plumes: list[Plume] = []
    for k, blob in enumerate(blobs):
        mine = np.flatnonzero(owner == k)
        if mine.size == 0:
            continue
        u = axis
        if u is None:
            u = blob.centroid - pts[mine[0]]
            u = u / max(float(np.hypot(*u)), 1e-9)
        fixed_k, source_k = (fixed, source) if axis is not None else (False, "bisector")
        order = mine[np.argsort(-(pts[mine] @ normal_left(u)))]  # along -n_left
        crotches = crotches_between(blob, u, [pts[i] for i in order]) if order.size > 1 else []
        for j, i in enumerate(order):
            merged = order.size > 1
            plumes.append(
                Plume(
                    blob,
                    pts[i].copy(),
                    u,
                    fixed_k or merged,
                    source_k,
                    crotch_left=crotches[j - 1] if merged and j > 0 else None,
                    crotch_right=crotches[j] if merged and j < len(crotches) else None,
                    merged=merged,
                    index=int(i),
                )
            )
    return plumes, [int(i) for i in np.flatnonzero(owner < 0)]


def _likely(hints: MeasureHints, cfg: GeometryConfig) -> LikelyApexes | None:
    points = hints.prior_array()
    if points is None:
        return None
    return LikelyApexes(
        points,
        cfg.apex_prior_px,
        cfg.apex_prior_tol_px,
        cfg.apex_prior_tol_frac,
        cfg.hint_apex_tol_px,
    )


def _sort_key(plumes: list[Plume], hint_axis: np.ndarray | None) -> np.ndarray:
    axes = [p.axis for p in plumes if np.all(np.isfinite(p.axis))]
    u = hint_axis if hint_axis is not None else (np.mean(axes, axis=0) if axes else None)
    if u is None or np.hypot(*u) < 1e-9:
        u = np.array([0.0, 1.0])
    return -normal_left(u / np.hypot(*u))  # image-right for a spray pointing down


def measure_cones(
    mask: np.ndarray,
    hints: MeasureHints | None = None,
    config: GeometryConfig | None = None,
) -> list[ConeMeasurement]:
    """Measure every spray plume in a binary mask.

    mask: (H, W) bool or integer array with values {0, 1} or {0, 255} (MaskError otherwise).
    hints: optional apex(es), axis, scale, nozzle height and spacing (MeasureHints).
    Returns one ConeMeasurement per plume, sorted along the boom (image left to right for
    sprays pointing down), or, with apex hints, one per hint apex in hint order. An empty
    mask gives a single measurement flagged no_spray (angles NaN), never an exception.
    """
    cfg = config or GeometryConfig()
    hints = hints or MeasureHints()
    hints.check()
    m = validate_mask(mask)
    opts = _options(cfg, hints)
    hint_axis = None if hints.axis is None else np.asarray(hints.unit_axis(), dtype=np.float64)
    hint_apexes = hints.apex_list()
    blobs = find_blobs(
        clean_mask(m, cfg.open_px, cfg.close_px), cfg.min_plume_area_px, cfg.min_plume_area_frac
    )
    missing: list[int] = []
    if hint_apexes is not None:
        plumes, missing = _plumes_hinted(blobs, hint_apexes, hint_axis, cfg)
        shapeless: list[Blob] = []
        for p in plumes:
            p.refit(opts)
    else:
        found = read_blobs(blobs, hint_axis, cfg, opts, m.shape, _likely(hints, cfg))
        plumes = [p for p in found if isinstance(p, Plume)]
        shapeless = [b for b in found if isinstance(b, Blob)]
    if hint_axis is None and hint_apexes is None:
        apply_boom(plumes, opts, cfg)
        shapeless = retry_with_boom(shapeless, plumes, opts, cfg)
    shape = m.shape
    results: list[ConeMeasurement] = []
    if hint_apexes is not None:
        for p in plumes:
            results.append(build_measurement(p, shape, cfg, hints))
        for i in missing:
            results.append(empty_measurement(i, hint_apexes[i]))
        results.sort(key=lambda r: r.index)
        return finish(results, hints, reindex=False)
    key_dir = _sort_key(plumes, hint_axis)
    items = [(float(p.apex @ key_dir), build_measurement(p, shape, cfg, hints)) for p in plumes]
    items += [
        (float(b.centroid @ key_dir), build_measurement(b, shape, cfg, hints)) for b in shapeless
    ]
    items.sort(key=lambda kv: kv[0])
    results = [r for _, r in items]
    if not results:
        results = [empty_measurement(0, None)]
    return finish(results, hints, reindex=True)
