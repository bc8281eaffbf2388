"""The line through a boom's apexes: nozzles on one boom are mounted parallel, so the
sprays point along its normal (docs/cone_angle.md, "Axis")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spraycv.geometry.tuning import TUNING
from spraycv.geometry.wedge import normal_left


def apexes_coincide(apexes: np.ndarray) -> bool:
    """Whether apexes (K, 2) are one point as far as a line through them goes: fewer than
    two, or spread by less than TUNING.coincide_px along both x and y."""
    return len(apexes) < 2 or float(np.ptp(apexes, axis=0).max()) < TUNING.coincide_px


def boom_normal(apexes: np.ndarray, towards: Sequence[np.ndarray]) -> np.ndarray:
    """Unit normal (2,) of the TLS line through apexes (K, 2), oriented towards the mean of
    the given points (each (2,))."""
    c = apexes.mean(axis=0)
    d = apexes - c
    _, _, vt = np.linalg.svd(d, full_matrices=False)
    b = vt[0]
    nrm = np.array([-b[1], b[0]])
    ref = np.mean(np.asarray(towards), axis=0) - c
    return nrm if nrm @ ref >= 0 else -nrm


def apex_line_axis(apexes: np.ndarray, mean_axis: np.ndarray, cos_tol: float) -> np.ndarray | None:
    """Normal (2,) of the line through apexes (K, 2), oriented like the unit mean_axis (2,);
    None when the apexes coincide or the normal is further than acos(cos_tol) from mean_axis
    (the apexes do not lie across the sprays: no boom)."""
    if apexes_coincide(apexes):
        return None
    nrm = boom_normal(apexes, [apexes.mean(axis=0) + mean_axis])
    return nrm if nrm @ mean_axis >= cos_tol else None


def along_boom(points: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices (K,) that order points (K, 2) along -n_left of the spray axis u (2,): image
    left to right for a spray pointing down, the order of the measurements."""
    return np.argsort(-(points @ normal_left(u)))
