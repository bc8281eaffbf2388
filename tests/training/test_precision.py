"""Precision modes: every config reads them alike, and auto picks bf16 only where the device
computes it natively."""

from __future__ import annotations

import pytest
import torch

from spraycv.config import FinetuneConfig, TrainConfig
from spraycv.config.refine import RefinerTrainConfig
from spraycv.training.precision import (
    PRECISIONS,
    autocast,
    check_precision,
    native_bf16,
    resolve_precision,
)

CPU = torch.device("cpu")


@pytest.mark.parametrize("config", [TrainConfig, FinetuneConfig, RefinerTrainConfig])
@pytest.mark.parametrize(("given", "read"), [(32, "32"), ("32", "32"), ("auto", "auto"),
                                             ("bf16-mixed", "bf16-mixed")])  # fmt: skip
def test_every_config_reads_a_precision_alike(config, given, read):
    assert config(precision=given).precision == read


@pytest.mark.parametrize("config", [TrainConfig, FinetuneConfig, RefinerTrainConfig])
def test_an_unknown_precision_is_refused_with_the_valid_ones(config):
    with pytest.raises(ValueError, match="'32', '16-mixed', 'bf16-mixed' or 'auto'"):
        config(precision="fp8")


@pytest.mark.parametrize("precision", ["32", "16-mixed", "bf16-mixed"])
def test_a_named_precision_is_kept(precision):
    assert resolve_precision(precision, CPU) == precision


def test_auto_is_bf16_where_the_cpu_computes_it_and_fp32_elsewhere():
    expected = "bf16-mixed" if native_bf16(CPU) else "32"
    assert resolve_precision("auto", CPU) == expected
    x = torch.ones(2, 2)
    with autocast("auto", CPU):
        y = x @ x
    assert y.dtype == (torch.bfloat16 if expected == "bf16-mixed" else torch.float32)


def test_check_precision_lists_the_valid_ones():
    assert set(PRECISIONS) == {"32", "16-mixed", "bf16-mixed", "auto"}
    with pytest.raises(ValueError, match="valid: 32, 16-mixed, bf16-mixed, auto"):
        check_precision("fp8", CPU)
    with pytest.raises(ValueError, match="16-mixed needs a CUDA GPU"):
        check_precision("16-mixed", CPU)
