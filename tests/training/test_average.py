"""spraycv.training.average: the weights a run validates and saves."""

from __future__ import annotations

import pytest
from torch import nn

from spraycv.training.average import WeightAverage


@pytest.mark.parametrize(("decay", "expected"), [(None, 3.0), (0.5, 2.0), (0.9, 1.2)])
def test_the_kept_weights_are_the_trained_ones_or_their_moving_average(decay, expected):
    model = nn.Linear(1, 1, bias=False)
    kept = WeightAverage(model, decay)
    for value in (1.0, 3.0):  # the first update copies, the next one averages
        model.weight.data.fill_(value)
        kept.update()
    assert float(kept.model.weight.detach()) == pytest.approx(expected)
    again = WeightAverage(model, decay)
    again.load_state_dict(kept.state_dict())
    assert float(again.model.weight.detach()) == pytest.approx(expected)
