"""The geometry's internal tuning: every number its decisions use that a user does not set.

One rule decides where a number lives:
- a user may set it (the band, morphology, debris floors, fit tolerances, the boom's axis
  tolerance, the direction and apex priors): a field of `spraycv.config.GeometryConfig`,
  validated and documented there;
- only a developer re-tunes it, on rendered masks with the accuracy benchmark: a field of
  `Tuning` below, read through the frozen `TUNING`.

Both are frozen. Changing a field here changes measured figures: re-run
`benchmarks/geometry_accuracy.py --n 500` and the held-out evaluation (docs/cone_angle.md).

Not tunables, and so written where they are used: guards against a division by zero
(1e-9, 1e-12), the half pixel between a pixel's centre and its edge, OpenCV's fixed-point
scales, and the conventions of docs/cone_angle.md (image-down (0, 1), n_left = (-uy, ux)).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    """The geometry's internal constants, grouped by the step that uses them."""

    # -- straightness: how a fitted side is scored (plume.straightness, search) ---------------
    outlier_penalty_px: float = 5.0  # score added per unit fraction of a side's points left out
    as_straight_px: float = 0.15  # two readings this close in score are equally straight

    # -- robust line fits (linefit) -----------------------------------------------------------
    huber_c_px: float = 1.345  # about 4x the residual RMS of a rasterised straight edge
    huber_iterations: int = 2
    ransac_inlier_px: float = 1.5
    outward_keep_px: float = 1.0  # a rasterised edge stays within ~0.7 px of its line
    trim_rounds: int = 3

    # -- one plume's wedge fit (wedge) --------------------------------------------------------
    crotch_margin_px: float = 3.0  # keep clear of the rounded bottom of a merged notch
    min_side_band_px: float = 8.0  # a crotch-limited side shorter than this reaches back
    converged_px: float = 0.3  # the apex moved less: the band would move by a fraction of a px
    converged_sin: float = 5e-4  # and the axis turned less (sine of the angle)

    # -- back profiles and notches (blobs) ----------------------------------------------------
    profile_bin_px: float = 1.5  # > 1: a diagonal contour step moves 1.41 px across the axis
    minima_window: int = 4  # bins: the staircase of a raster edge makes one-bin dips

    # -- the hull-corner search (search) ------------------------------------------------------
    max_candidates: int = 8  # sharpest hull corners tried as apexes
    wedge_fallbacks: int = 3  # later search wedges tried for a blob nothing else reads
    point_starts: int = 8  # directions a search from a given point (a likely apex) starts along
    outline_stride: int = 2  # every other outline point is plenty to rank candidates
    search_iterations: int = 2
    search_trim_rounds: int = 1  # one-sided trims per iteration, and in the last one
    search_final_trim_rounds: int = 2
    hull_simplify_px: float = 1.5  # the hull is simplified by max(this, frac * perimeter)
    hull_simplify_frac: float = 0.01
    straight_corner_norm: float = 0.05  # |sum of edge directions| below this: no corner
    second_start_deg: float = 15.0  # hull bisector this far from the centroid: start both
    ahead_frac: float = 0.5  # a real apex has this share of the plume's extent ahead of it
    widest_wedge_cos: float = -0.9995  # cosine of the widest opening (about 178 deg)
    dropped_weight: float = 0.2  # points dropped outside a side (droplets) count this much
    min_balance: float = 0.25  # one side with fewer points than this share of the other's
    bow_min_points: int = 5  # a side's bow (sagitta) is measured from this many points
    outside_penalty_px: float = 0.5  # an apex off the image (nozzle out of frame) is rare
    off_outline_px: float = 1.0  # at most, for an apex well behind the outline (virtual)
    behind_scale_frac: float = 0.1  # ... reached this share of the length behind it
    behind_scale_min_px: float = 1.0
    apex_on_outline_px: float = 4.0  # an apex this close to the outline is on it
    tip_margin_px: float = 1.0  # an opened tip starts up to (open_px / 2 + this) / tan ahead
    narrowest_wedge_deg: float = 1.0  # included angle floor in that allowance

    # -- reading a blob (reading, candidates, checks) -----------------------------------------
    clean_single_px: float = 0.5  # a single plume's rasterised boundaries fit to ~0.3 px
    min_explained: float = 0.85  # a wedge leaving more of the outline outside is not all
    explained_stride: int = 4  # every 4th outline point is plenty for a fraction
    explained_tol_px: float = 3.0  # room for bends: max(px, frac * length) outside a side
    explained_tol_frac: float = 0.1
    lonely_margin_px: float = 1.0  # a split wins by this when one wedge leaves much outside
    min_part_length_frac: float = 0.2  # a split part shorter than this share is a bump
    likely_drift_frac: float = 0.3  # a part read at a likely apex may end this share of its
    # length from it (a merged neighbour shortens its band); further, its lines met elsewhere
    notch_reach_px: float = 10.0  # a boom notch starts within max(px, frac * L) of the apex
    notch_reach_frac: float = 0.1
    notch_level_frac: float = 0.25  # ... and its hull edge stays within this share of L
    border_gap_frac: float = 0.25  # a border-cut outline may start this share of L ahead
    coincide_px: float = 2.0  # apexes spread less than this are one point: no line through

    # -- confidence: evidence -> scores in [0, 1] (confidence; tuned on rendered val sets,
    # never on the held-out ones: docs/cone_angle.md, "Confidence") --------------------------
    contrast_none: float = 0.03  # edge step (share of the grey range) that is no edge at all
    contrast_clear: float = 0.10  # ... and one clearly seen
    widening_none: float = 0.5  # width growth over the angles' own: a plume opens at ~1
    widening_clear: float = 0.85
    support_radius_px: float = 8.0  # an apex-head peak this near (or frac * L) supports it
    support_radius_frac: float = 0.1
    support_falloff: float = 0.5  # beyond, the score falls as exp(-(d / r - 1)^2 / falloff)
    contrast_offset_px: float = 2.0  # the edge is sampled max(px, frac * L) either side
    contrast_offset_frac: float = 0.03
    fit_rms_power: float = 4.0  # fit score 1 / (1 + (rms / GeometryConfig.max_fit_rms_px)^p)
    # the fit limits hold in pixels of frames up to this many on their shorter side (the
    # largest validated: heldout_small's far views); a larger frame's boundaries are as rough
    # in its own, more numerous pixels, so its residuals are read in pixels of this size
    # (confidence.pixel_scale; a photo at 4x the resolution lost 13 % of its trusted
    # readings to poor_fit: experiments row 163)
    reference_short_px: float = 1024.0
    crop_support_none: float = 0.2  # the refiner's mean spray probability on a plume's
    crop_support_clear: float = 0.5  # core (spraycv.refine.stage): none at all, clearly a plume
    failing_score: float = 0.5  # a piece of evidence scoring below this is a reason
    across_axis_deg: float = 5.0  # a side this far on the other side of the axis: no wedge
    # about it (an axis off by a few degrees puts a narrow plume's side just across)
    sides_meet_frac: float = 0.05  # lines meeting further than this share of L from the apex
    # (every consistent reading's meet at it to rounding; the refiner's own fall-back is 0.25)
    # a side point nearer the frame's edge than this share of its shorter side lies along it
    # (a few pixels of the refiner's crop: its edge is read that far inside the cut)
    frame_edge_frac: float = 0.01

    # -- matching measurements to ground truth (matching: the benchmark and evaluation) ------
    match_min_px: float = 10.0  # apex distance always accepted
    match_frac: float = 0.2  # and up to this fraction of the nozzle's spray length


TUNING = Tuning()
