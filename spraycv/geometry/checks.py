"""What a candidate reading must pass: checks on fitted plumes (pure predicates and measures).

Each answers one question the reading layer asks (geometry/reading.py): does the wedge open
forward, is its apex at the tip of the outline, how much of the outline does it explain,
are split parts real plumes of one boom, can a notch be the crotch with a neighbour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from spraycv.config.geometry import GeometryConfig
from spraycv.geometry.blobs import Notch
from spraycv.geometry.plume import Plume
from spraycv.geometry.search import tip_allowance
from spraycv.geometry.tuning import TUNING
from spraycv.geometry.wedge import normal_left


def opens(plume: Plume) -> bool:
    """The wedge is fitted and opens forward: positive included angle, plume ahead of the
    apex."""
    fit = plume.fit
    if fit is None or not fit.ok or fit.dir_left is None or fit.dir_right is None:
        return False
    if fit.length <= 0:
        return False
    n = normal_left(fit.axis)
    return float(fit.dir_left @ n) > 0 > float(fit.dir_right @ n)


def tip_ok(plume: Plume, cfg: GeometryConfig) -> bool:
    """The fitted apex is at the tip of the outline (or the outline is cut by the border)."""
    fit = plume.fit
    if fit is None or fit.dir_left is None or fit.dir_right is None:
        return False
    s = (plume.blob.pts - plume.apex) @ plume.axis
    inc = math.degrees(math.acos(float(np.clip(fit.dir_left @ fit.dir_right, -1.0, 1.0))))
    gap = float(s.min())
    if not plume.blob.usable.all() and gap > 0:
        return gap <= TUNING.border_gap_frac * float(s.max())
    allowed = float(tip_allowance(np.array([inc]), cfg.open_px)[0])
    return -TUNING.apex_on_outline_px <= gap <= allowed


def explained_fraction(plume: Plume) -> float:
    """Fraction of the blob's outline inside the plume's wedge (with room for bends)."""
    fit = plume.fit
    if fit is None or fit.left is None or fit.right is None:
        return 0.0
    pts = plume.blob.pts[:: TUNING.explained_stride]
    tol = max(TUNING.explained_tol_px, TUNING.explained_tol_frac * fit.length)
    inside = (pts - plume.apex) @ plume.axis >= -tol
    for line, sign in ((fit.left, 1.0), (fit.right, -1.0)):
        d = line.direction
        out = sign * np.array([-d[1], d[0]])  # away from the spray
        inside &= (pts - line.point) @ out <= tol
    return float(inside.mean())


def sizeable(parts: Sequence[Plume]) -> bool:
    """Split parts are real plumes, not droplet bumps: each is fitted and long enough."""
    lengths = [p.fit.length if p.fit is not None and p.fit.ok else 0.0 for p in parts]
    return min(lengths) >= TUNING.min_part_length_frac * max(lengths) > 0


def parallel(plumes: Sequence[Plume], cfg: GeometryConfig) -> bool:
    """Merged plumes come from one boom: their (bisector) axes agree within the boom
    tolerance; a ragged blob split at a droplet's notch gives wedges pointing anywhere."""
    axes = np.array([p.axis for p in plumes if p.fitted])
    if len(axes) < len(plumes):
        return False
    mean = axes.sum(axis=0)
    mean /= max(float(np.hypot(*mean)), 1e-12)
    return bool((axes @ mean).min() >= math.cos(math.radians(cfg.boom_axis_tol_deg)))


def boom_notch(notch: Notch, single: Plume) -> bool:
    """Whether a notch next to a clean single wedge can be the crotch with a merged neighbour.

    The hull edge bridging such a notch runs along the boom, from this apex to the
    neighbour's, both about level along the axis; dents of the front and the hollows along
    a bent boundary are bridged by edges that run far along the axis.
    """
    length = single.fit.length if single.fit is not None else 0.0
    reach = max(TUNING.notch_reach_px, TUNING.notch_reach_frac * length)
    if notch.distance_to_edge(single.apex) > reach:
        return False
    s = [abs(float((p - single.apex) @ single.axis)) for p in (notch.a, notch.b)]
    return max(s) <= TUNING.notch_level_frac * length
