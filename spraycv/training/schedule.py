"""Learning-rate schedules, and their time-budgeted form for runs that stop on the clock.

A run with `max_minutes` stops when its time is up, whatever epoch it has reached. A
schedule planned in steps would then stop a slow architecture at a high learning rate and a
fast one at the end of its decay: an unfair comparison. So a budgeted run follows its
schedule by progress, the larger of the share of steps done and the share of the budget
spent, and every model ends its decay when its time or its steps run out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

FINAL_FRACTION = 1e-3  # the learning rate at the end of a decay, as a fraction of the peak
ONE_CYCLE_START = 1.0 / 25.0  # one-cycle's first learning rate (torch's div_factor)


def cosine_factor(progress: float, warmup: float = 0.0) -> float:
    """Cosine decay from 1 to FINAL_FRACTION over progress in [0, 1] (warm-up ignored)."""
    p = min(max(progress, 0.0), 1.0)
    return FINAL_FRACTION + (1.0 - FINAL_FRACTION) * 0.5 * (1.0 + math.cos(math.pi * p))


def one_cycle_factor(progress: float, warmup: float) -> float:
    """One cycle: a cosine warm-up from ONE_CYCLE_START to 1 over the first `warmup` of the
    progress, then a cosine decay to FINAL_FRACTION."""
    p = min(max(progress, 0.0), 1.0)
    if warmup > 0 and p < warmup:
        rise = 0.5 * (1.0 - math.cos(math.pi * p / warmup))
        return ONE_CYCLE_START + (1.0 - ONE_CYCLE_START) * rise
    return cosine_factor((p - warmup) / max(1.0 - warmup, 1e-9))


SHAPES: dict[str, Callable[[float, float], float]] = {
    "cosine": cosine_factor,
    "onecycle": one_cycle_factor,
}


@dataclass
class BudgetProgress:
    """Progress in [0, 1] of a run after `step` optimiser steps: the larger of step /
    total_steps and the budget's share of time spent since the first call (clock in s)."""

    total_steps: int
    budget_s: float
    clock: Callable[[], float] = time.monotonic
    started: float | None = field(default=None, init=False)

    def __call__(self, step: int) -> float:
        now = self.clock()
        if self.started is None:
            self.started = now
        by_steps = step / max(self.total_steps, 1)
        return min(1.0, max(by_steps, (now - self.started) / self.budget_s))


def budget_scheduler(
    optimizer: torch.optim.Optimizer,
    shape: str,
    warmup: float,
    progress: BudgetProgress,
) -> torch.optim.lr_scheduler.LambdaLR:
    """A LambdaLR that follows `shape` (a key of SHAPES) by the run's budgeted progress.

    A resumed run replays its steps at once, so its clock starts again from the steps done.
    """
    if shape not in SHAPES:
        raise ValueError(f"schedule {shape!r} is not one of {', '.join(sorted(SHAPES))}")
    factor = SHAPES[shape]
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: factor(progress(step), warmup))
