"""One plume being read: its blob, apex, axis and fitted wedge; built one way for one apex
or for several merged on a boom; scored by one straightness."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from spraycv.geometry.blobs import Blob, crotches_between
from spraycv.geometry.wedge import FitOptions, WedgeFit, fit_pinned, fit_wedge, normal_left

AxisSource = str  # "hint" | "boom" | "bisector" (docs/cone_angle.md, "Axis")


@dataclass(frozen=True)
class Plume:
    """One plume of a blob: apex (2,) and axis (2,) (seeds, then the fitted ones), whether
    the fit keeps the axis and where it came from, the crotches (2,) with merged neighbours,
    the hint index (hinted apexes only), the fitted wedge (None until `refit`) and whether
    the apex is pinned (a sure apex-head peak the free fit runs away from: `fit_pinned`)."""

    blob: Blob
    apex: np.ndarray
    axis: np.ndarray
    fixed_axis: bool
    axis_source: AxisSource
    crotch_left: np.ndarray | None = None
    crotch_right: np.ndarray | None = None
    merged: bool = False
    index: int | None = None
    fit: WedgeFit | None = None
    pinned: bool = False

    def refit(self, opts: FitOptions) -> Plume:
        """This plume with its wedge fitted from the current apex and axis; the fit's apex and
        axis replace them where it worked."""
        if self.pinned:
            fit = fit_pinned(self.blob.fit_pts, self.blob.hull, self.apex, self.axis, opts)
            return replace(self, fit=fit, axis=fit.axis if fit.ok else self.axis)
        fit = fit_wedge(
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
        if not fit.ok:
            return replace(self, fit=fit)
        return replace(self, fit=fit, apex=fit.apex, axis=fit.axis)

    @property
    def fitted(self) -> bool:
        """Both boundaries were fitted."""
        return self.fit is not None and self.fit.ok

    def t_range(self) -> tuple[float, float]:
        """This plume's lateral range (t from the apex) inside a merged component."""
        n = normal_left(self.axis)
        hi = math.inf if self.crotch_left is None else float((self.crotch_left - self.apex) @ n)
        lo = -math.inf if self.crotch_right is None else float((self.crotch_right - self.apex) @ n)
        return lo, hi


def plumes_at_apexes(
    blob: Blob,
    apexes: Sequence[np.ndarray] | np.ndarray,
    axis: np.ndarray,
    fixed_axis: bool,
    source: AxisSource,
    crotches: Sequence[np.ndarray] | None = None,
    indices: Sequence[int] | None = None,
) -> list[Plume]:
    """One plume per apex of a blob (the one constructor; not fitted yet).

    apexes: K >= 1 points (2,), ordered along -n_left of axis (2,) (boomline.along_boom).
    One apex is a plume of its own. Several are plumes merged on a boom, each bounded by the
    crotches with its neighbours: K - 1 points (2,) between consecutive apexes, found on the
    back profile when not given. indices: the hint index of each apex, if hinted.
    """
    index = list(indices) if indices is not None else [None] * len(apexes)
    if len(apexes) == 1:
        return [Plume(blob, apexes[0], axis, fixed_axis, source, index=index[0])]
    if crotches is None:
        crotches = crotches_between(blob, axis, list(apexes))
    return [
        Plume(
            blob,
            a,
            axis,
            fixed_axis,
            source,
            # apexes run along -n_left: the previous crotch is on this plume's left
            crotch_left=crotches[j - 1] if j > 0 else None,
            crotch_right=crotches[j] if j < len(crotches) else None,
            merged=True,
            index=index[j],
        )
        for j, a in enumerate(apexes)
    ]


def straightness(plumes: Sequence[Plume]) -> float:
    """The worst plume's straightness (px, WedgeFit.straightness; lower is better), inf if
    one could not be fitted (or for none)."""
    return max(
        (p.fit.straightness() if p.fit is not None else math.inf for p in plumes),
        default=math.inf,
    )
