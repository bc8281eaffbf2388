"""Rewrite checkpoints saved with a deprecated smp `timm-` encoder under its `tu-` replacement.

spraycv already reads such checkpoints as their replacement on load (the mapping lives in
spraycv/models/encoders.py); this makes the files themselves say so. Weights keep their
dtype and values; the sidecar records the old name as "encoder_converted_from".

Usage:
    python scripts/upgrade_checkpoint.py runs/x/best.safetensors [more.safetensors ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spraycv.training.checkpoint import CheckpointError, upgrade_checkpoint


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("weights", type=Path, nargs="+")
    args = ap.parse_args()
    failed = 0
    for weights in args.weights:
        try:
            old = upgrade_checkpoint(weights)
        except CheckpointError as exc:
            print(f"error: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"{weights}: " + (f"encoder {old!r} upgraded" if old else "already current"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
