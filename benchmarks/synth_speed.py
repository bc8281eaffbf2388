"""Synthetic renderer throughput: images/s of `write_dataset` with 1 and 2 workers.

Each run renders and writes the same `--n` images (JPEG, labels, masks) into a temporary
folder; wall time includes the worker pool start-up, as `spraycv synth` sees it.

Usage: python benchmarks/synth_speed.py [--n 60] [--size 512] [--workers 1 2] [-c CONFIG]
(CONFIG: a renderer YAML, e.g. configs/render/train.yaml for the training mix of styles)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from spraycv.config.loader import load_config
from spraycv.config.render import RenderConfig
from spraycv.data.synth import write_dataset


def measure(n: int, size: int, workers: int, config: RenderConfig | None = None) -> float:
    """Seconds to write `n` images of `size` px with `workers` processes."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        write_dataset(
            Path(tmp) / "ds", n, size=size, seed=0, workers=workers, config=config, progress=False
        )
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="images per run")
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("-c", "--config", default=None, help="renderer YAML (default: none)")
    args = parser.parse_args()
    config = load_config(RenderConfig, args.config, [])
    write_dataset_warmup = max(2, min(4, args.n))
    measure(write_dataset_warmup, args.size, 1, config)  # imports, caches
    rows = [(w, measure(args.n, args.size, w, config)) for w in args.workers]
    base = rows[0][1]
    what = f" ({args.config})" if args.config else ""
    print(f"synthetic renderer{what}, {args.n} images of {args.size}x{args.size} per run")
    print(f"{'workers':>7} | {'seconds':>7} | {'images/s':>8} | {'speed-up':>8}")
    print(f"{'-' * 7}-+-{'-' * 7}-+-{'-' * 8}-+-{'-' * 8}")
    for w, sec in rows:
        print(f"{w:>7} | {sec:>7.2f} | {args.n / sec:>8.1f} | {base / sec:>7.2f}x")


if __name__ == "__main__":
    main()
