"""The boom axis: plumes pointing the same way share the normal of their apex line."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from spraycv.geometry.blobs import Blob
from spraycv.geometry.boomline import apex_line_axis
from spraycv.geometry.candidates import BlobReading, split_along
from spraycv.geometry.context import ReadContext
from spraycv.geometry.plume import Plume, straightness
from spraycv.geometry.reading import loses_sure_apex, read_along_axis
from spraycv.geometry.tuning import TUNING


def boom_group(fitted: list[Plume], cos_tol: float) -> tuple[list[Plume], np.ndarray]:
    """The largest group of fitted plumes agreeing (axes within acos(cos_tol)) with one of
    them, or, when none agree, the straightest plume alone; and its mean axis (2,)."""
    axes = np.array([p.axis for p in fitted])
    agree = (axes @ axes.T) >= cos_tol  # few plumes: O(n^2) is fine
    lead = int(np.argmax(agree.sum(axis=1)))
    if agree[lead].sum() < 2:
        lead = int(np.argmin([straightness((p,)) for p in fitted]))
    ref = axes[agree[lead]].sum(axis=0)
    ref /= np.hypot(*ref)
    return [fitted[i] for i in np.flatnonzero(agree[lead])], ref


def apply_boom(reading: BlobReading, ctx: ReadContext) -> BlobReading:
    """Two or more plumes pointing the same way share the boom normal as their axis.

    Plumes that disagree with the largest agreeing group (or, when none agree, with the
    straightest plume) are read again along its axis, and join the boom when that reading
    is as straight as their own: a plume whose ragged front happened to look straight, or
    two merged plumes read as one. Without a boom after all, re-read plumes take their own
    bisector again. Returns the reading with its plumes in the same order (a re-read plume
    replaced by its parts).
    """
    fitted = [p for p in reading.plumes if p.fitted]
    if len(fitted) < 2:
        return reading
    cos_tol = math.cos(math.radians(ctx.cfg.boom_axis_tol_deg))
    members, ref = boom_group(fitted, cos_tol)
    member_ids = {id(p) for p in members}
    slots: list[tuple[Plume, ...]] = []  # per plume: itself, or the parts it was re-read as
    reread: list[Plume] = []
    for p in reading.plumes:
        alt = () if id(p) in member_ids or p.merged else _reread(p, ref, ctx)
        slots.append(alt or (p,))
        members.extend(alt)
        reread.extend(alt)
    apexes = np.array([p.apex for p in members])
    nrm = apex_line_axis(apexes, ref, cos_tol) if len(members) >= 2 else None
    if nrm is None:
        redo = {id(p): replace(p, fixed_axis=False, axis_source="bisector") for p in reread}
    else:
        redo = {id(p): replace(p, axis=nrm, fixed_axis=True, axis_source="boom") for p in members}
    plumes = tuple(_on_boom(p, redo, ctx) for s in slots for p in s)
    return BlobReading.of(plumes, reading.unexplained)


def _on_boom(plume: Plume, redo: dict[int, Plume], ctx: ReadContext) -> Plume:
    """The plume refitted along the boom's axis, or as it was where that fit fails or its
    apex runs off a sure apex-head peak that the plume explained: a lit part that joins the
    boom tilts its axis, and must not cost a true plume its reading."""
    if id(plume) not in redo:
        return plume
    moved = redo[id(plume)].refit(ctx.opts)
    if not plume.fitted:
        return moved
    if not moved.fitted or loses_sure_apex((plume,), (moved,), plume.blob, ctx.likely):
        return plume
    return moved


def _reread(plume: Plume, axis: np.ndarray, ctx: ReadContext) -> tuple[Plume, ...]:
    """The plume's blob read along the boom's axis (2,), where that is as straight as the
    plume itself and keeps the sure apex-head peaks it explained; () where it is not."""
    alt = read_along_axis(plume.blob, axis, "boom", ctx).plumes
    if straightness(alt) > straightness((plume,)) + TUNING.as_straight_px:
        return ()
    if loses_sure_apex((plume,), alt, plume.blob, ctx.likely):
        return ()  # the boom's axis tilted a plume the head places: its apex ran off
    return alt


def retry_with_boom(reading: BlobReading, ctx: ReadContext) -> BlobReading:
    """Blobs the search could not read, measured again along a known boom axis: those
    whose parts all fit join the plumes (after them); the rest stay unexplained."""
    axes = [p.axis for p in reading.plumes if p.axis_source == "boom"]
    if not reading.unexplained or not axes:
        return reading
    found: list[Plume] = []
    left: list[Blob] = []
    for blob in reading.unexplained:
        parts = [
            p.refit(ctx.opts) for p in split_along(blob, np.asarray(axes[0]), True, "boom", ctx.cfg)
        ]
        if all(p.fitted for p in parts):
            found.extend(parts)
        else:
            left.append(blob)
    return BlobReading.of((*reading.plumes, *found), tuple(left))
