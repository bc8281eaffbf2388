"""Match measured plumes to ground-truth nozzles (renderer records) by apex distance.

Used by the geometry benchmark and by model evaluation: both compare measurements with
the renderer's `record["nozzles"]` (docs/cone_angle.md for the definitions).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spraycv.geometry.tuning import TUNING
from spraycv.geometry.types import ConeMeasurement, QualityFlag


@dataclass(frozen=True)
class Pair:
    """A ground-truth nozzle (its index in the list given) and its measurement."""

    gt: int
    meas: int
    apex_dist_px: float


@dataclass(frozen=True)
class MatchResult:
    """Pairs, visible ground-truth nozzles left unmatched, and measurements matching none."""

    pairs: list[Pair] = field(default_factory=list)
    missed: list[int] = field(default_factory=list)
    extra: list[int] = field(default_factory=list)


def _visible(nz: Mapping[str, Any]) -> bool:
    return bool(nz.get("visible", nz.get("state", "on") != "off"))


def match_to_truth(
    measurements: Sequence[ConeMeasurement],
    truth: Sequence[Mapping[str, Any]],
    max_dist_px: float | None = None,
) -> MatchResult:
    """Greedy one-to-one matching by apex distance, nearest pairs first.

    truth: renderer nozzle dicts (keys apex, length_px, visible/state). Only visible nozzles
    are matched; measurements flagged no_spray or without an apex are ignored. A pair is
    accepted within max_dist_px, by default max(TUNING.match_min_px, TUNING.match_frac * L).
    """
    cands = []
    meas_ok = [
        i
        for i, m in enumerate(measurements)
        if QualityFlag.NO_SPRAY not in m.flags and all(math.isfinite(v) for v in m.apex)
    ]
    gt_ok = [i for i, nz in enumerate(truth) if _visible(nz)]
    for g in gt_ok:
        nz = truth[g]
        gx, gy = (float(v) for v in nz["apex"])
        length = float(nz.get("length_px", 0.0) or 0.0)
        limit = max_dist_px or max(TUNING.match_min_px, TUNING.match_frac * length)
        for i in meas_ok:
            mx, my = measurements[i].apex
            d = math.hypot(mx - gx, my - gy)
            if d <= limit:
                cands.append((d, g, i))
    cands.sort()
    used_g: set[int] = set()
    used_m: set[int] = set()
    pairs = []
    for d, g, i in cands:
        if g in used_g or i in used_m:
            continue
        used_g.add(g)
        used_m.add(i)
        pairs.append(Pair(g, i, d))
    pairs.sort(key=lambda p: p.gt)
    missed = [g for g in gt_ok if g not in used_g]
    extra = [i for i in meas_ok if i not in used_m]
    return MatchResult(pairs, missed, extra)


def angle_errors(meas: ConeMeasurement, nz: Mapping[str, Any]) -> dict[str, float]:
    """Signed errors (measured - truth, deg) of the included and both half-angles."""
    return {
        "included": meas.included_angle_deg - float(nz["included_angle_deg"]),
        "left": meas.half_angle_left_deg - float(nz["half_angle_left_deg"]),
        "right": meas.half_angle_right_deg - float(nz["half_angle_right_deg"]),
    }


@dataclass(frozen=True)
class ReadingComparison:
    """Two readings of one frame compared: the signed included-angle differences of the
    paired plumes (predicted - reference, deg), and the plumes left unpaired on each side."""

    errors_deg: list[float]
    missed: int  # reference plumes with no predicted partner
    extra: int  # predicted plumes with no reference partner


def compare_readings(
    reference: Sequence[ConeMeasurement], predicted: Sequence[ConeMeasurement]
) -> ReadingComparison:
    """Pair the measured plumes of two readings by apex distance (as `match_to_truth`, with
    the reference plumes as the truth) and compare their included angles; plumes without
    angles are left out on both sides."""
    ref = [m for m in reference if m.ok]
    pred = [m for m in predicted if m.ok]
    truth = [{"apex": m.apex, "length_px": m.length_px, "visible": True} for m in ref]
    match = match_to_truth(pred, truth)
    errors = [pred[p.meas].included_angle_deg - ref[p.gt].included_angle_deg for p in match.pairs]
    return ReadingComparison(errors, len(match.missed), len(match.extra))
