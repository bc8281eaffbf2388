"""Plumes the mask geometry missed, read by the refiner from the apex head's peaks.

Where plumes merge into one blob the mask no longer shows where each one is (its sides lie
inside its neighbours' spray), and the geometry reads the blob as fewer plumes, or from the
crotch between two of them. The apex head still marks each nozzle, and the refiner reads a
plume from the full-resolution image rather than from the mask. So each peak that no reading
explains gets a canonical crop at that peak, posed like the frame's reliable plumes (a boom's
nozzles point the same way), and the refiner reads it as it re-reads any plume. The reading
is kept only when the confidence step trusts it, it is a new plume (not one already read),
and the mask holds spray on its core, or a blob of spray in its wedge that no reliable plume
explains (a weak or clogged nozzle's sparse spray next to its orifice can escape the coarse
mask, which keeps only a blob further along); it then replaces any reading of the same plume
from elsewhere (a crotch): one reading per nozzle. Where that plume's trusted reading sits at a
peak of its own, the new peak is the nozzle's body behind the orifice (the third drawer's
back-lit booms: experiments row 210), and the trusted reading stays. Nor is the
new reading kept where the crop was posed like one plume alone and the mask holds spray just
outside one of its sides (read too narrow, like a narrower neighbour). Frames without a
reliable plume are left alone: with nothing to pose a crop on, a peak on a lit part would be
read as a plume.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import cv2
import numpy as np

from spraycv.geometry.plume_shape import polygon_box, rays
from spraycv.geometry.report import finish
from spraycv.geometry.types import ConeMeasurement, MeasureHints, QualityFlag
from spraycv.geometry.wedge import normal_left

Assess = Callable[[ConeMeasurement, float], ConeMeasurement]
"""A reading and its crop support -> the reading with its confidence (spraycv.measure)."""

EXPLAINED_PX, EXPLAINED_FRAC = 10.0, 0.1  # a reading's apex this near a peak explains it
BODY_FRACS, BODY_MARGIN_DEG = (0.1, 1.3), 5.0  # a peak in a reliable plume's body is its own
MIN_MASK_COVER = 0.2  # share of the recovered plume's core the mask must call spray: a peak
# at a nozzle that is off reads its neighbours' overlapping spray, with no mask at its core
CORE_SHARE, CORE_BAND = 0.7, (0.1, 0.4)  # the core: 0.7 x the narrower half angle, 10-40 % L
CORE_GRID = (24, 9)  # points along and across the core where the mask is read
FLANK_DEG, MAX_FLANK_COVER = 8.0, 0.6  # a plume recovered on a crop posed like one plume
# alone (which may be another kind of nozzle, or a clogged one) whose mask holds spray this
# far outside a side, on more than this share of that flank, was read too narrow: that side
# lies inside the spray. Poses from two or more plumes are a boom's, and there a merged
# neighbour's spray covers the flanks of plumes read right
BLOB_REACH, MIN_BLOB_SHARE, MIN_BLOB_PX = 1.3, 0.5, 30  # a mask blob of at least MIN_BLOB_PX
# pixels, MIN_BLOB_SHARE of them in a recovered plume's wedge (out to BLOB_REACH x its
# length) and outside every reliable plume's wedge, is spray that only the new plume explains
SAME_PLUME_FRAC, SAME_PLUME_MARGIN_DEG = 0.5, 5.0  # a reading from a crotch (same_plume)
SAME_PLUME_TURN_DEG = 25.0
SAME_CORE_SHARE = 0.8  # a reading with this share of its core in a recovered plume's wedge


def near_apex_of(point: np.ndarray, m: ConeMeasurement) -> bool:
    """Whether `m`'s apex lies near enough to `point` to be the same nozzle's."""
    if not np.isfinite(m.apex).all():
        return False
    length = m.length_px if math.isfinite(m.length_px) else 0.0
    return math.dist(point, m.apex) < max(EXPLAINED_PX, EXPLAINED_FRAC * length)


def at_a_peak(m: ConeMeasurement, peaks: np.ndarray) -> bool:
    """Whether `m`'s apex lies at one of the (K, 2) apex-head peaks (`near_apex_of`): `m`
    was read from an orifice, not from a crotch further down its plume."""
    return any(near_apex_of(point, m) for point in np.asarray(peaks).reshape(-1, 2))


def in_wedge(
    points: np.ndarray, m: ConeMeasurement, margin_deg: float, fracs: tuple[float, float]
) -> np.ndarray:
    """(N,) bool: which of the (N, 2) points lie in `m`'s wedge, within `margin_deg` of its
    wider side, at distances along its axis strictly between `fracs` x its length."""
    u = np.asarray(m.axis, dtype=np.float64)
    v = np.asarray(points, dtype=np.float64).reshape(-1, 2) - np.asarray(m.apex)
    s, t = v @ u, np.abs(v @ normal_left(u))
    widest = max(m.half_angle_left_deg, m.half_angle_right_deg)
    ahead = (s > fracs[0] * m.length_px) & (s < fracs[1] * m.length_px)
    return ahead & (np.degrees(np.arctan2(t, s)) <= widest + margin_deg)


def _mask_share(mask: np.ndarray, points: np.ndarray, weight: np.ndarray) -> float:
    """Weighted share of the image (x, y) points (N, 2) that the (H, W) {0, 1} mask calls
    spray; points outside the image count as no spray."""
    x, y = np.rint(points).astype(np.int64).T
    h, w = mask.shape
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    spray = np.zeros(len(points), dtype=bool)
    spray[inside] = mask[y[inside], x[inside]] > 0
    return float(weight[spray].sum() / max(float(weight.sum()), 1e-12))


def flank_cover(mask: np.ndarray, m: ConeMeasurement) -> float:
    """The larger of the shares of `m`'s two flanks (FLANK_DEG outside each side, over
    CORE_BAND of its length) that the (H, W) {0, 1} mask calls spray: near 0 where both
    sides are the plume's edges, near 1 where one lies inside a wider plume."""
    s = np.linspace(*CORE_BAND, CORE_GRID[0]) * m.length_px  # (S,) along the axis
    u = np.asarray(m.axis, dtype=np.float64)
    n = normal_left(u)
    shares = []
    for half, sign in ((m.half_angle_left_deg, 1.0), (m.half_angle_right_deg, -1.0)):
        t = sign * s * math.tan(math.radians(min(half + FLANK_DEG, 89.0)))
        points = np.asarray(m.apex) + s[:, None] * u + t[:, None] * n
        shares.append(_mask_share(mask, points, np.ones(len(s))))
    return max(shares)


def core_points(m: ConeMeasurement) -> tuple[np.ndarray, np.ndarray]:
    """A fixed grid of points over `m`'s core (CORE_SHARE x its narrower half angle, over
    CORE_BAND of its length), (N, 2) image (x, y), and each one's share of the core's area."""
    s = np.linspace(*CORE_BAND, CORE_GRID[0])[:, None] * m.length_px  # (S, 1) along the axis
    half = math.radians(CORE_SHARE * min(m.half_angle_left_deg, m.half_angle_right_deg))
    t = np.linspace(-1.0, 1.0, CORE_GRID[1])[None, :] * s * math.tan(half)  # (S, T) across
    u = np.asarray(m.axis, dtype=np.float64)
    n = normal_left(u)
    points = np.stack([m.apex[0] + s * u[0] + t * n[0], m.apex[1] + s * u[1] + t * n[1]], -1)
    area = np.broadcast_to(s, t.shape)  # a row's width grows with s
    return points.reshape(-1, 2), (area / area.sum()).ravel()


def core_cover(mask: np.ndarray, m: ConeMeasurement) -> float:
    """Share of `m`'s core that the (H, W) {0, 1} mask calls spray, read at `core_points`
    (the same cost on a 20-megapixel photo); points outside the image count as no spray."""
    points, area = core_points(m)
    return _mask_share(mask, points, area)


def _wedge_box(m: ConeMeasurement, reach: float, shape: tuple[int, ...]) -> tuple[slice, slice]:
    """(rows, cols) of the frame that `m`'s wedge out to `reach` x its length can touch
    (empty slices when none)."""
    widest = min(max(m.half_angle_left_deg, m.half_angle_right_deg), 89.0)
    radius = reach * m.length_px / math.cos(math.radians(widest))
    fan = rays(np.asarray(m.axis, dtype=np.float64), np.linspace(-widest, widest, 9))
    apex = np.asarray(m.apex, dtype=np.float64)
    box = polygon_box(np.vstack([apex[None], apex + radius * fan]), shape)
    return box if box is not None else (slice(0, 0), slice(0, 0))


def own_blob(mask: np.ndarray, m: ConeMeasurement, others: Sequence[ConeMeasurement]) -> bool:
    """Whether a connected component of the (H, W) {0, 1} mask, of MIN_BLOB_PX pixels or
    more, has MIN_BLOB_SHARE of its pixels in `m`'s wedge (out to BLOB_REACH x its length)
    and outside the wedge of every reading in `others`: spray that only `m` explains. A peak
    at a nozzle that is off reads its neighbours' spray, whose blobs lie in their wedges."""
    if not (math.isfinite(m.length_px) and m.length_px > 0 and np.isfinite(m.apex).all()):
        return False
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), None, 8)
    rows, cols = _wedge_box(m, BLOB_REACH, mask.shape)
    ys, xs = np.nonzero(labels[rows, cols])
    points = np.stack([xs + cols.start, ys + rows.start], axis=-1).astype(np.float64)
    mine = in_wedge(points, m, 0.0, (0.0, BLOB_REACH))
    for other in others:
        mine &= ~in_wedge(points, other, 0.0, (0.0, math.inf))
    inside = np.bincount(labels[ys[mine] + rows.start, xs[mine] + cols.start], minlength=count)
    area = stats[:, cv2.CC_STAT_AREA]
    return bool(np.any((inside[1:] >= MIN_BLOB_SHARE * area[1:]) & (area[1:] >= MIN_BLOB_PX)))


def same_plume(new: ConeMeasurement, m: ConeMeasurement) -> bool:
    """Whether `m` reads `new`'s plume from elsewhere, its axis within SAME_PLUME_TURN_DEG:
    from a crotch (its apex downstream in `new`'s wedge, within SAME_PLUME_MARGIN_DEG of its
    wider side, before SAME_PLUME_FRAC of its length), or from beside the nozzle (most of its
    core inside `new`'s wedge). A neighbour on the boom has its apex and core beside it."""
    if not (m.ok and np.isfinite(m.apex).all() and np.isfinite(m.axis).all()):
        return False
    turn = math.degrees(math.acos(min(1.0, abs(float(np.dot(new.axis, m.axis))))))
    if turn >= SAME_PLUME_TURN_DEG:
        return False
    crotch = in_wedge(np.asarray(m.apex), new, SAME_PLUME_MARGIN_DEG, (0.0, SAME_PLUME_FRAC))
    points, area = core_points(m)
    inside = in_wedge(points, new, 0.0, (0.0, math.inf))
    return bool(crotch[0]) or float(area[inside].sum()) >= SAME_CORE_SHARE


def one_way(reliable: Sequence[ConeMeasurement]) -> bool:
    """Whether there are reliable plumes and they point one way (each axis within
    SAME_PLUME_TURN_DEG of their mean), so that a crop can be posed like them."""
    if not reliable:
        return False
    mean = np.mean([m.axis for m in reliable], axis=0)
    mean = mean / max(float(np.linalg.norm(mean)), 1e-9)
    cos = math.cos(math.radians(SAME_PLUME_TURN_DEG))
    return all(float(np.dot(m.axis, mean)) > cos for m in reliable)


def seed_reading(
    point: np.ndarray, reliable: Sequence[ConeMeasurement], index: int
) -> ConeMeasurement:
    """A provisional reading at `point`, posed like the frame's reliable plumes: their mean
    axis, median length and median wider half angle (the refiner's crop pose)."""
    axis = np.mean([m.axis for m in reliable], axis=0)
    axis = axis / np.linalg.norm(axis)
    widest = [max(m.half_angle_left_deg, m.half_angle_right_deg) for m in reliable]
    half = float(np.median(widest))
    return ConeMeasurement(
        index=index,
        apex=(float(point[0]), float(point[1])),
        axis=(float(axis[0]), float(axis[1])),
        axis_source="bisector",  # the seed's axis is a guess: the refined sides set it
        length_px=float(np.median([m.length_px for m in reliable])),
        half_angle_left_deg=half,
        half_angle_right_deg=half,
        included_angle_deg=2.0 * half,
        flags=(QualityFlag.FROM_APEX_PEAK, QualityFlag.AXIS_FROM_BISECTOR),
    )


def recover_missed(
    image: np.ndarray,
    mask: np.ndarray,
    apexes: np.ndarray | None,
    readings: Sequence[ConeMeasurement],
    refiner,
    assess: Assess,
    hints: MeasureHints | None = None,
) -> list[ConeMeasurement]:
    """`readings` plus the plumes recovered at unexplained apex peaks (see the module).

    Args:
        image: the (H, W[, 3]) frame the refiner reads.
        mask: its (H, W) uint8 {0, 1} mask.
        apexes: (K, 2) apex-head peaks, or None (no apex head: nothing to recover from).
        readings: the frame's assessed readings.
        refiner: a spraycv.refine.stage.Refiner.
        assess: gives a recovered reading its confidence.
        hints: the rig's hints (the recovered plumes' coverage width needs its height).
    """
    out = list(readings)
    reliable = [m for m in out if m.reliable]
    if apexes is None or not len(apexes) or not one_way(reliable):
        return out
    recovered = 0
    for point in np.asarray(apexes, dtype=np.float64).reshape(-1, 2):
        body = [m for m in out if m.reliable and in_wedge(point, m, BODY_MARGIN_DEG, BODY_FRACS)]
        if body or any(near_apex_of(point, m) for m in out):
            continue  # a reading's apex explains this peak, or it lies in a plume's body
        seed = seed_reading(point, reliable, len(out))
        (read,), (support,) = refiner.refine_with_support(image, [seed], hints)
        if read is seed or any(near_apex_of(np.asarray(read.apex), m) for m in out):
            continue  # the crop gave no lines, or they lead back to a plume already read
        read = assess(read, support)
        if not read.reliable:
            continue
        if core_cover(mask, read) < MIN_MASK_COVER and not own_blob(mask, read, reliable):
            continue  # no spray in the mask where it reads a plume
        if len(reliable) == 1 and flank_cover(mask, read) > MAX_FLANK_COVER:
            continue  # posed like one plume alone, and read too narrow: a side in spray
        rivals = [m for m in out if same_plume(read, m)]
        if any(m.reliable and at_a_peak(m, apexes) for m in rivals):
            continue  # read already from its own orifice's peak: this peak is its body's
        out = [m for m in out if not any(m is r for r in rivals)] + [read]
        recovered += 1
    if not recovered:
        return out
    return along_boom(out, reliable, hints)


def along_boom(
    readings: Sequence[ConeMeasurement],
    reliable: Sequence[ConeMeasurement],
    hints: MeasureHints | None,
) -> list[ConeMeasurement]:
    """The readings numbered along the boom again, as the geometry numbers them (left to right
    for sprays pointing down), with each one's overlap with the next."""
    axis = np.mean([m.axis for m in reliable], axis=0)
    along = -normal_left(axis / np.linalg.norm(axis))

    def position(m: ConeMeasurement) -> float:
        return float(np.dot(m.apex, along)) if np.isfinite(m.apex).all() else math.inf

    return finish(sorted(readings, key=position), hints or MeasureHints(), reindex=True)
