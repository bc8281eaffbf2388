"""Time-budgeted schedules: a run that stops on the clock ends its decay when time is up."""

from __future__ import annotations

import itertools

import pytest
import torch

from spraycv.training.schedule import (
    FINAL_FRACTION,
    ONE_CYCLE_START,
    SHAPES,
    BudgetProgress,
    budget_scheduler,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def optimiser(lr: float = 1.0) -> torch.optim.Optimizer:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)


# (shape, factor at the start, at the peak's progress, at the end)
SHAPE_POINTS = [
    ("cosine", 1.0, 1.0, FINAL_FRACTION),
    ("onecycle", ONE_CYCLE_START, 1.0, FINAL_FRACTION),
]


@pytest.mark.parametrize(("shape", "start", "peak", "end"), SHAPE_POINTS)
def test_shapes(shape, start, peak, end):
    factor = SHAPES[shape]
    peak_at = 0.0 if shape == "cosine" else 0.2
    assert factor(0.0, 0.2) == pytest.approx(start)
    assert factor(peak_at, 0.2) == pytest.approx(peak)
    assert factor(1.0, 0.2) == pytest.approx(end)
    values = [factor(p / 100, 0.2) for p in range(int(peak_at * 100), 101)]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(values))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_clock_ends_the_decay_before_the_steps_do(shape):
    clock = FakeClock()
    opt = optimiser()
    sched = budget_scheduler(opt, shape, 0.1, BudgetProgress(1000, 60.0, clock))
    for _ in range(10):  # 1 % of the steps, but the whole minute
        opt.step()
        clock.now += 6.0
        sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(FINAL_FRACTION)


def test_without_time_pressure_the_steps_lead():
    clock = FakeClock()
    opt = optimiser()
    sched = budget_scheduler(opt, "cosine", 0.0, BudgetProgress(10, 3600.0, clock))
    for _ in range(5):
        opt.step()
        sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(SHAPES["cosine"](0.5, 0.0))


def test_unknown_schedule_lists_the_valid_ones():
    with pytest.raises(ValueError, match="cosine, onecycle"):
        budget_scheduler(optimiser(), "step", 0.0, BudgetProgress(10, 1.0, FakeClock()))
