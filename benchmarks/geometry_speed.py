"""Speed of the cone geometry: ms per 512x512 single-nozzle mask on one core.

Single-threaded OpenCV and numpy (BLAS) are forced before they are imported. Masks are the
renderer's ground truth for single-nozzle scenes (`--source render`, default) or analytic
wedges (`--source analytic`: no renderer needed). Each mask is measured `--repeat` times
and its fastest run kept (the others show the machine's noise, not the code's cost); both
wall-clock and the thread's CPU time are reported, the latter being what one core spends
even on a machine shared with other jobs.

Usage:
    python benchmarks/geometry_speed.py [--n 200] [--source render|analytic] [--repeat 5]
Target (issue): median <= 2 ms.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spraycv.geometry import measure_cones  # noqa: E402
from spraycv.geometry.analytic import WedgeSpec, draw_wedge  # noqa: E402

TARGET_MS = 2.0


def rendered_masks(n: int, seed: int, size: int) -> list[np.ndarray]:
    from spraycv.config.render import NozzleDistConfig, RenderConfig
    from spraycv.data.synth import render_sample

    cfg = RenderConfig(nozzle=NozzleDistConfig(prob_single=1.0))
    return [render_sample(seed + i, size=size, config=cfg).mask for i in range(n)]


def analytic_masks(n: int, seed: int, size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        inc = float(rng.uniform(15, 130))
        asym = float(rng.uniform(-8, 8))
        tilt = float(rng.uniform(-35, 35)) if rng.random() < 0.85 else float(rng.uniform(-180, 180))
        length = float(rng.uniform(0.3, 0.8)) * size
        u = np.array([math.sin(math.radians(tilt)), math.cos(math.radians(tilt))])
        apex = np.array([size / 2, size / 2]) - u * length * 0.5
        half = max(inc / 2 + abs(asym) / 2, 1.0)
        flat = float(np.clip(1 - math.log(0.75) / math.log(math.cos(math.radians(half))), 0.4, 1))
        spec = WedgeSpec(
            (float(apex[0]), float(apex[1])), tilt, inc / 2 + asym / 2, inc / 2 - asym / 2,
            length, ragged=0.05, bend_deg=4.0, seed=i, flatness=flat,
        )  # fmt: skip
        out.append(draw_wedge((size, size), spec))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--source", choices=("render", "analytic"), default="render")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    make = rendered_masks if args.source == "render" else analytic_masks
    masks = make(args.n, args.seed, args.size)
    for m in masks[:5]:
        measure_cones(m)  # warm-up (imports, caches)
    wall, cpu = [], []
    for m in masks:
        best_wall = best_cpu = math.inf
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.thread_time()
            measure_cones(m)
            best_cpu = min(best_cpu, time.thread_time() - c0)
            best_wall = min(best_wall, time.perf_counter() - t0)
        wall.append(1e3 * best_wall)
        cpu.append(1e3 * best_cpu)
    print(f"{len(masks)} {args.source} {args.size}x{args.size} single-nozzle masks, 1 thread:")
    for name, values in (("wall", wall), ("cpu", cpu)):
        a = np.asarray(values)
        print(
            f"  {name:4s} median {np.median(a):.2f} ms, p95 {np.percentile(a, 95):.2f} ms, "
            f"max {a.max():.2f} ms"
        )
    # CPU time of this thread: what one core spends, whatever else the machine is running
    ok = np.median(cpu) <= TARGET_MS
    print("TARGET", "PASS" if ok else "FAIL", f"(median CPU time <= {TARGET_MS} ms)")


if __name__ == "__main__":
    main()
