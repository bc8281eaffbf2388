"""Mask validation: turn every accepted mask into uint8 {0, 1}, reject the rest by name."""

from __future__ import annotations

from typing import Any

import numpy as np


class MaskError(ValueError):
    """The mask given to the geometry is not a binary (H, W) array; the message says why."""


def validate_mask(mask: Any) -> np.ndarray:
    """Check a binary mask and return it as a C-contiguous uint8 array of {0, 1}.

    Accepted: a 2-D (H, W) numpy array, dtype bool or any integer dtype, values in {0, 1} or
    {0, 255} (an all-zero mask is fine). Anything else raises MaskError naming the problem.
    """
    if not isinstance(mask, np.ndarray):
        raise MaskError(f"mask must be a numpy array; got {type(mask).__name__}")
    if mask.ndim == 3 and mask.shape[2] in (1, 3, 4):
        raise MaskError(f"mask must be 2-D (H, W); got shape {mask.shape}: pass one channel")
    if mask.ndim != 2:
        raise MaskError(f"mask must be 2-D (H, W); got shape {mask.shape}")
    if mask.shape[0] < 2 or mask.shape[1] < 2:
        raise MaskError(f"mask is too small: shape {mask.shape}, need at least 2 x 2")
    if mask.dtype == np.bool_:
        return np.ascontiguousarray(mask, dtype=np.uint8)
    if not np.issubdtype(mask.dtype, np.integer):
        hint = ": threshold it first (mask > 0.5)" if mask.dtype.kind == "f" else ""
        raise MaskError(f"mask dtype {mask.dtype} is not supported{hint}")
    hi = int(mask.max())
    lo = int(mask.min())
    if lo < 0 or hi not in (0, 1, 255) or (hi == 255 and np.any((mask != 0) & (mask != 255))):
        values = np.unique(mask)
        shown = ", ".join(str(int(v)) for v in values[:8]) + (", ..." if values.size > 8 else "")
        raise MaskError(
            f"mask is not binary: found values [{shown}]; expected {{0, 1}} or {{0, 255}}"
        )
    if hi == 255 or mask.dtype != np.uint8:
        return (mask > 0).astype(np.uint8)
    return np.ascontiguousarray(mask)
