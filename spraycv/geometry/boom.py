"""The boom axis: plumes pointing the same way share the normal of their apex line."""

from __future__ import annotations

import math

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Blob
from spraycv.geometry.reading import read_along_axis, split_blob, worst_score
from spraycv.geometry.report import Plume
from spraycv.geometry.tuning import TUNING
from spraycv.geometry.wedge import FitOptions


def boom_normal(apexes: np.ndarray, towards: list[np.ndarray]) -> np.ndarray:
    """Unit normal of the TLS line through apexes (K, 2), oriented towards the given points."""
    c = apexes.mean(axis=0)
    d = apexes - c
    _, _, vt = np.linalg.svd(d, full_matrices=False)
    b = vt[0]
    nrm = np.array([-b[1], b[0]])
    ref = np.mean(np.asarray(towards), axis=0) - c
    return nrm if nrm @ ref >= 0 else -nrm


def apply_boom(plumes: list[Plume], opts: FitOptions, cfg: GeometryConfig) -> None:
    """Two or more plumes pointing the same way share the boom normal as their axis.

    Plumes that disagree with the largest agreeing group (or, when none agree, with the
    straightest plume) are read again along its axis, and join the boom when that reading
    is as straight as their own: a plume whose ragged front happened to look straight, or
    two merged plumes read as one. `plumes` is updated in place.
    """
    fitted = [p for p in plumes if p.fit is not None and p.fit.ok]
    if len(fitted) < 2:
        return
    axes = np.array([p.axis for p in fitted])
    cos_tol = math.cos(math.radians(cfg.boom_axis_tol_deg))
    # the largest group of plumes agreeing with one of them (few plumes: O(n^2) is fine)
    agree = (axes @ axes.T) >= cos_tol
    lead = int(np.argmax(agree.sum(axis=1)))
    if agree[lead].sum() < 2:
        lead = int(np.argmin([worst_score([p]) for p in fitted]))
    members = [fitted[i] for i in np.flatnonzero(agree[lead])]
    ref = axes[agree[lead]].sum(axis=0)
    ref /= np.hypot(*ref)
    reread: list[Plume] = []
    for p in [q for q in plumes if all(q is not m for m in members)]:
        if p.merged:
            continue
        alt = read_along_axis(p.blob, ref, "boom", cfg, opts)
        if worst_score(alt) <= worst_score([p]) + TUNING.as_straight_px:
            i = next(k for k, q in enumerate(plumes) if q is p)
            plumes[i : i + 1] = alt
            members.extend(alt)
            reread.extend(alt)
    nrm = boom_axis(members, ref, cos_tol) if len(members) >= 2 else None
    if nrm is None:  # no boom after all: re-read plumes take their own bisector again
        for p in reread:
            p.fixed_axis, p.axis_source = False, "bisector"
            p.refit(opts)
        return
    for p in members:
        p.axis, p.fixed_axis, p.axis_source = nrm, True, "boom"
        p.refit(opts)


def boom_axis(members: list[Plume], mean_axis: np.ndarray, cos_tol: float) -> np.ndarray | None:
    """Normal of the line through the members' apexes, oriented like mean_axis; None when
    the apexes coincide or do not lie across the sprays (then it is not a boom)."""
    apexes = np.array([p.apex for p in members])
    if np.ptp(apexes, axis=0).max() < 2.0:
        return None
    nrm = boom_normal(apexes, [apexes.mean(axis=0) + mean_axis])
    return nrm if nrm @ mean_axis >= cos_tol else None


def retry_with_boom(
    blobs: list[Blob], plumes: list[Plume], opts: FitOptions, cfg: GeometryConfig
) -> list[Blob]:
    """Blobs the search could not read, measured again along a known boom axis.

    Returns the blobs that still give no wedge; the plumes found are added to `plumes`.
    """
    axes = [p.axis for p in plumes if p.axis_source == "boom"]
    if not blobs or not axes:
        return blobs
    left = []
    for blob in blobs:
        parts = split_blob(blob, np.asarray(axes[0]), True, "boom", cfg)
        for p in parts:
            p.refit(opts)
        if all(p.fit is not None and p.fit.ok for p in parts):
            plumes.extend(parts)
        else:
            left.append(blob)
    return left
