"""measure_cones: binary spray mask -> one ConeMeasurement per plume (docs/cone_angle.md).

The pipeline, step by step (the same steps and names as docs/cone_angle.md, "The pipeline"):
1. `validate_mask`: the mask as uint8 {0, 1};
2. `clean_mask`, `find_blobs`: morphology, then the outer contours of its components;
3. read the blobs into plumes:
   - with apex hints, `read_at_hint_apexes`: one plume per hint apex;
   - otherwise `read_blobs` (geometry/reading.py): per blob, candidate readings -> choose,
     or `read_along_axis` with a hint axis;
4. without hints, `apply_boom` then `retry_with_boom` (geometry/boom.py): plumes pointing
   the same way share the normal of their apex line as their axis;
5. `report_along_boom` / `report_at_hint_apexes` (geometry/report.py): one measurement per
   plume, ordered along the boom (or in hint order) and numbered.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob, clean_mask, find_blobs
from spraycv.geometry.boom import apply_boom, retry_with_boom
from spraycv.geometry.boomline import along_boom, apexes_coincide, boom_normal
from spraycv.geometry.context import ReadContext
from spraycv.geometry.plume import Plume, plumes_at_apexes
from spraycv.geometry.reading import read_blobs
from spraycv.geometry.report import report_along_boom, report_at_hint_apexes
from spraycv.geometry.types import ConeMeasurement, MeasureHints, Point
from spraycv.geometry.validate import validate_mask


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
    binary = validate_mask(mask)
    ctx = ReadContext.of(cfg, hints, binary.shape)
    blobs = find_blobs(
        clean_mask(binary, cfg.open_px, cfg.close_px),
        cfg.min_plume_area_px,
        cfg.min_plume_area_frac,
    )
    apexes = hints.apex_list()
    if apexes is not None:
        plumes, missing = read_at_hint_apexes(blobs, apexes, ctx)
        return report_at_hint_apexes(plumes, missing, apexes, ctx.shape, cfg, hints)
    reading = read_blobs(blobs, ctx)
    if ctx.hint_axis is None:
        reading = retry_with_boom(apply_boom(reading, ctx), ctx)
    return report_along_boom(reading, ctx.shape, cfg, hints, ctx.hint_axis)


def nearest_blob(points: np.ndarray, blobs: Sequence[Blob], tol_px: float) -> np.ndarray:
    """For each point (K, 2), the index of the blob whose outline is nearest (the first on
    ties), or -1 where none is within tol_px; (K,)."""
    owner = np.full(len(points), -1)
    best = np.full(len(points), np.inf)
    for k, blob in enumerate(blobs):
        d = np.hypot(
            points[:, None, 0] - blob.pts[None, :, 0], points[:, None, 1] - blob.pts[None, :, 1]
        )
        dmin = d.min(axis=1)
        take = dmin < best
        owner[take], best[take] = k, dmin[take]
    owner[best > tol_px] = -1
    return owner


def read_at_hint_apexes(
    blobs: Sequence[Blob], apexes: Sequence[Point], ctx: ReadContext
) -> tuple[list[Plume], list[int]]:
    """One fitted plume per hint apex that lies on a blob, and the hint indices with none.

    The axis: the hint axis; else, for two or more apexes, the normal of the line through
    them (a boom); else each blob's own bisector, started towards its centroid. Several
    apexes on one blob are plumes merged on a boom, split at the crotches between them.
    """
    pts = np.asarray(apexes, dtype=np.float64)
    owner = nearest_blob(pts, blobs, ctx.cfg.hint_apex_tol_px)
    axis, source = ctx.hint_axis, "hint"
    if axis is None and blobs and not apexes_coincide(pts):
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
        order = mine[along_boom(pts[mine], u)]
        fixed = axis is not None or order.size > 1  # merged plumes keep the axis they split on
        parts = plumes_at_apexes(
            blob,
            pts[order],
            u,
            fixed,
            source if axis is not None else "bisector",
            indices=[int(i) for i in order],
        )
        plumes.extend(p.refit(ctx.opts) for p in parts)
    return plumes, [int(i) for i in np.flatnonzero(owner < 0)]
