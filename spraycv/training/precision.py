"""Precision modes: fp32, fp16 mixed (CUDA, with a GradScaler), bf16 mixed (CUDA or CPU) and
auto (bf16 mixed where the device computes bf16 natively, else fp32)."""

from __future__ import annotations

import contextlib
from typing import get_args

import torch

from spraycv.config.train import PrecisionName

AUTOCAST_DTYPES = {"16-mixed": torch.float16, "bf16-mixed": torch.bfloat16}
PRECISIONS: tuple[str, ...] = get_args(PrecisionName)
# CPU features that compute bf16 in hardware; without them PyTorch emulates it, slower than
# fp32 (experiments row 224: with AVX512-BF16 the network's training loop runs 1.9 x faster)
_CPU_BF16_PROBES = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")


def native_bf16(device: torch.device) -> bool:
    """Whether the device computes bf16 in hardware (a CUDA GPU with bf16, or a CPU with
    AVX512-BF16 or AMX)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    probes = (getattr(torch.cpu, name, None) for name in _CPU_BF16_PROBES)
    return any(probe() for probe in probes if probe is not None)


def resolve_precision(precision: str, device: torch.device) -> str:
    """The precision a run computes in: "auto" becomes bf16-mixed on a device that computes
    bf16 natively and 32 elsewhere; any other precision stays as it is."""
    if precision != "auto":
        return precision
    return "bf16-mixed" if native_bf16(device) else "32"


def check_precision(precision: str, device: torch.device) -> None:
    """Fail early on a precision the device cannot run."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(PRECISIONS)}")
    if precision == "16-mixed" and device.type != "cuda":
        raise ValueError("precision 16-mixed needs a CUDA GPU; on the CPU use bf16-mixed or 32")


def autocast(precision: str, device: torch.device) -> contextlib.AbstractContextManager:
    """The forward-pass context for this precision (a no-op for fp32)."""
    resolved = resolve_precision(precision, device)
    if resolved == "32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=AUTOCAST_DTYPES[resolved])


def grad_scaler(precision: str, device: torch.device) -> torch.amp.GradScaler:
    """A GradScaler, active only for fp16 (bf16 has fp32's exponent range and needs none)."""
    return torch.amp.GradScaler(device.type, enabled=precision == "16-mixed")
