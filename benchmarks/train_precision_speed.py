"""Training steps a second of the shipped network on this machine's CPU, fp32 against bf16
autocast, side by side: alternated rounds of a few steps each (experiments row 224).

bf16 pays only where the CPU computes it natively (AVX512-BF16 or AMX; `precision: auto`
picks it there); elsewhere PyTorch emulates it, slower than fp32.

Usage: OMP_NUM_THREADS=1 python benchmarks/train_precision_speed.py [--rounds 3] [--steps 5]
       [--batch 8] [--size 256] [--weights weights/default.safetensors]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from spraycv.training.checkpoint import load_checkpoint
from spraycv.training.precision import autocast, native_bf16

CPU = torch.device("cpu")


def seconds_a_step(model, optimizer, images, masks, precision: str, steps: int) -> float:
    """Mean wall time of `steps` optimiser steps (forward under the precision, BCE on the
    mask channel, backward, AdamW)."""
    started = time.perf_counter()
    for _ in range(steps):
        with autocast(precision, CPU):
            logits = model(images)[:, :1]
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits.float(), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - started) / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", type=Path, default=Path("weights/default.safetensors"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=256)
    args = ap.parse_args()
    model, _ = load_checkpoint(args.weights)
    model = model.float().train()
    optimizer = torch.optim.AdamW(model.parameters(), 1e-5)
    generator = torch.Generator().manual_seed(0)
    shape = (args.batch, 3, args.size, args.size)
    images = torch.randn(shape, generator=generator)
    masks = (torch.rand((args.batch, 1, args.size, args.size), generator=generator) > 0.5).float()
    print(f"{torch.get_num_threads()} threads, native bf16: {native_bf16(CPU)}, batch {shape}")
    precisions = ("32", "bf16-mixed")
    for precision in precisions:  # warm-up
        seconds_a_step(model, optimizer, images, masks, precision, 1)
    print("| round | " + " | ".join(f"{p} images/s" for p in precisions) + " | bf16 x fp32 |")
    print("|---|---|---|---|")
    for r in range(args.rounds):
        rates = [args.batch / seconds_a_step(model, optimizer, images, masks, p, args.steps)
                 for p in precisions]  # fmt: skip
        print(f"| {r + 1} | {rates[0]:.1f} | {rates[1]:.1f} | {rates[1] / rates[0]:.2f} |")


if __name__ == "__main__":
    main()
