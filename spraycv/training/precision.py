"""Precision modes: fp32, fp16 mixed (CUDA, with a GradScaler) and bf16 mixed (CUDA or CPU)."""

from __future__ import annotations

import contextlib

import torch

AUTOCAST_DTYPES = {"16-mixed": torch.float16, "bf16-mixed": torch.bfloat16}


def check_precision(precision: str, device: torch.device) -> None:
    """Fail early on a precision the device cannot run."""
    if precision not in ("32", *AUTOCAST_DTYPES):
        raise ValueError(f"unknown precision {precision!r}; valid: 32, 16-mixed, bf16-mixed")
    if precision == "16-mixed" and device.type != "cuda":
        raise ValueError("precision 16-mixed needs a CUDA GPU; on the CPU use bf16-mixed or 32")


def autocast(precision: str, device: torch.device) -> contextlib.AbstractContextManager:
    """The forward-pass context for this precision (a no-op for fp32)."""
    if precision == "32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=AUTOCAST_DTYPES[precision])


def grad_scaler(precision: str, device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler, active only for fp16 (bf16 has fp32's exponent range and needs none)."""
    return torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")
