"""The nozzle's apex read from a canonical crop's apex channel, to a fraction of a pixel.

A refiner with an apex channel (`RefinerTrainConfig.apex_weight`) learns, for each crop, a
spatial softmax whose mass sits on the true apex (a Gaussian of a few crop pixels). The apex
is the softmax's mean near its peak: the mean, not the peak, places it between pixels, and
the window keeps a second bump (a neighbour's nozzle entering the crop) out of it. Edge lines
meeting near the orifice place the apex to about 0.4 px along the axis, with a tail past
1.7 px where the sheet is faint there (docs/experiments.md, row 115); the nozzle body's tip is
a cue they do not use.
"""

from __future__ import annotations

import numpy as np

from spraycv.refine.pose import to_image

APEX_WINDOW = 5  # crop px on each side of the peak that the mean is taken over
APEX_MIN_MASS = 0.5  # a reading with less of the softmax's mass near its peak is not used


def softmax_2d(logits: np.ndarray) -> np.ndarray:
    """(H, W) spatial softmax of (H, W) logits (float64, sums to 1)."""
    z = np.asarray(logits, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def read_apex(logits: np.ndarray, window: int = APEX_WINDOW) -> tuple[np.ndarray, float]:
    """The apex (col, row) in crop pixels, sub-pixel, and the share of the softmax's mass
    within `window` px of its peak (near 1: one sure apex; low: none or several).

    Args:
        logits: (H, W) apex logits of one crop (the refiner's channel 1).
    """
    p = softmax_2d(logits)
    row, col = np.unravel_index(int(np.argmax(p)), p.shape)
    r0, r1 = max(row - window, 0), min(row + window + 1, p.shape[0])
    c0, c1 = max(col - window, 0), min(col + window + 1, p.shape[1])
    patch = p[r0:r1, c0:c1]
    mass = float(patch.sum())
    rows, cols = np.mgrid[r0:r1, c0:c1]
    apex = np.array([(patch * cols).sum(), (patch * rows).sum()]) / mass
    return apex, mass


def channel_apex(
    logits: np.ndarray, transform: np.ndarray, min_mass: float = APEX_MIN_MASS
) -> np.ndarray | None:
    """The apex (2,) in the image read on a crop's apex logits (H, W), through its crop ->
    image `transform` (2, 3); None where less than `min_mass` of the softmax lies near its
    peak."""
    apex, mass = read_apex(logits)
    return to_image(apex[None], transform)[0] if mass >= min_mass else None
