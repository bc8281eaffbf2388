"""Average the weights of checkpoints of one architecture (a "model soup").

Runs fine-tuned from the same start (e.g. refiner_s4 and refiner_s5, both continued from the
shipped refiner on different fresh frames) lie in one basin, so the mean of their weights is a
model that reads like an ensemble at the cost of one (docs/experiments.md, row 42). BatchNorm
statistics are averaged too; integer buffers (batch counters) are the first checkpoint's. The
sidecar is the first checkpoint's, with the sources named.

`--only PREFIX` (repeatable) averages only the tensors whose names start with a prefix and
keeps the first checkpoint's elsewhere: a soup of the encoder alone keeps the decoder whose
last features the apex head reads (docs/experiments.md, row 111).

Usage:
    python scripts/average_weights.py A.safetensors B.safetensors [...] [--only net.encoder.]
        --out OUT.safetensors
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from spraycv.training.checkpoint import SHIPPED_DTYPE, load_checkpoint, save_checkpoint


def average_state(
    states: list[dict[str, torch.Tensor]], only: tuple[str, ...] = ()
) -> dict[str, torch.Tensor]:
    """The element-wise mean of float tensors (of those named with a prefix in `only`, when
    given); other tensors from the first state."""
    keys = set(states[0])
    for i, state in enumerate(states[1:], 1):
        if set(state) != keys:
            raise ValueError(f"checkpoint {i} has other tensors than checkpoint 0")
    unmatched = [p for p in only if not any(k.startswith(p) for k in keys)]
    if unmatched:
        groups = sorted({".".join(k.split(".")[:2]) + "." for k in keys})
        raise ValueError(f"--only {unmatched[0]!r} names no tensor; groups: {', '.join(groups)}")
    return {
        k: torch.stack([s[k].float() for s in states]).mean(0)
        if states[0][k].is_floating_point() and (not only or k.startswith(only))
        else states[0][k]
        for k in states[0]
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PREFIX",
        help="average only tensors whose names start with PREFIX (repeatable)",
    )
    args = ap.parse_args()
    if len(args.weights) < 2:
        ap.error("give two checkpoints or more")
    loaded = [load_checkpoint(w) for w in args.weights]
    model, meta = loaded[0]
    try:
        state = average_state([m.state_dict() for m, _ in loaded], tuple(args.only))
    except ValueError as exc:
        ap.error(str(exc))
    model.load_state_dict(state)
    sidecar = {**meta, "averaged_from": [str(w) for w in args.weights]}
    if args.only:
        sidecar["averaged_only"] = list(args.only)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(args.out, model, sidecar, dtype=SHIPPED_DTYPE)
    print(f"mean of {len(args.weights)} checkpoints -> {args.out}")


if __name__ == "__main__":
    main()
