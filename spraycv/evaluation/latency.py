"""CPU latency of a segmenter: median wall time per image, batch 1, after warm-up."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def median_latency_ms(
    segmenter: Callable[[np.ndarray], np.ndarray],
    image: np.ndarray,
    runs: int = 15,
    warmup: int = 3,
) -> float:
    """Median milliseconds of `segmenter(image)` over `runs` calls (pre/post-processing in)."""
    for _ in range(warmup):
        segmenter(image)
    times = []
    for _ in range(runs):
        tic = time.perf_counter()
        segmenter(image)
        times.append(time.perf_counter() - tic)
    return 1000.0 * float(np.median(times))
