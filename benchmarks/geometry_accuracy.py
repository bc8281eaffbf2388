"""Accuracy of the cone geometry on rendered ground-truth masks (acceptance benchmark).

Renders N images (mixed nozzle types, tilts, asymmetry, 1 to 8 nozzles), runs
`measure_cones` on each ground-truth mask, matches every visible nozzle to a measurement by
apex distance and prints the angle errors:

- "axis hint": the ground-truth axis is given, as a lab rig provides it; included and
  half-angle errors (the acceptance figures);
- "no hint": nothing is given; included-angle errors for all frames, half-angle errors for
  boom frames (>= 2 visible plumes), where the axis comes from the boom;
- missed and extra plumes, and break-downs by nozzle type, nozzle count, tilt and state.

Usage:
    python benchmarks/geometry_accuracy.py [--n 500] [--seed 0] [--workers 2]
        [--cache /tmp/geom_cache.npz] [--worst 10]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spraycv.geometry import MeasureHints, measure_cones
from spraycv.geometry.matching import angle_errors, match_to_truth

ACCEPT = {"median": 0.3, "p95": 1.0}


def _render(args: tuple[int, int]) -> tuple[np.ndarray, dict]:
    from spraycv.data.synth import render_sample

    seed, size = args
    r = render_sample(seed, size=size)
    return np.packbits(r.mask.astype(bool), axis=None), r.record


def load_samples(n: int, seed: int, size: int, workers: int, cache: str | None) -> list:
    """[(mask (H, W) uint8, record)] for seeds seed .. seed + n - 1, rendered or cached."""
    if cache and os.path.exists(cache):
        data = np.load(cache, allow_pickle=False)
        meta = json.loads(str(data["meta"]))
        if meta["n"] >= n and meta["seed"] == seed and meta["size"] == size:
            records = json.loads(str(data["records"]))
            return [
                (np.unpackbits(data[f"m{i}"])[: size * size].reshape(size, size), records[i])
                for i in range(n)
            ]
    jobs = [(seed + i, size) for i in range(n)]
    if workers > 1:
        with Pool(workers) as pool:
            out = pool.map(_render, jobs, chunksize=4)
    else:
        out = [_render(j) for j in jobs]
    if cache:
        arrays = {f"m{i}": packed for i, (packed, _) in enumerate(out)}
        np.savez(
            cache,
            meta=json.dumps({"n": n, "seed": seed, "size": size}),
            records=json.dumps([rec for _, rec in out]),
            **arrays,
        )
    return [(np.unpackbits(p)[: size * size].reshape(size, size), rec) for p, rec in out]


def _stats(values: list[float]) -> str:
    if not values:
        return "n=0"
    a = np.abs(np.asarray(values))
    return (
        f"n={a.size:4d}  median {np.median(a):.3f}  p95 {np.percentile(a, 95):.3f}  "
        f"max {a.max():.3f}"
    )


def _tilt_bucket(tilt: float) -> str:
    t = abs((tilt + 180.0) % 360.0 - 180.0)
    return "|tilt|<5" if t < 5 else "5-35" if t <= 35 else ">35 (rotated)"


@dataclass
class _Tally:
    """The errors of every sample, with (hint) and without (free) the axis hint."""

    errs: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    groups: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    missed: dict[str, int] = field(default_factory=lambda: {"hint": 0, "free": 0})
    extra: dict[str, int] = field(default_factory=lambda: {"hint": 0, "free": 0})
    n_visible: int = 0
    bad: list[tuple[float, int, str]] = field(default_factory=list)  # (error, sample, what)
    times: list[float] = field(default_factory=list)  # seconds of the free geometry


def _tally(samples: list) -> _Tally:
    """Every sample's mask measured with and without the axis hint, matched to its truth."""
    t = _Tally()
    for k, (mask, rec) in enumerate(samples):
        truth = rec["nozzles"]
        visible = [nz for nz in truth if nz["visible"]]
        t.n_visible += len(visible)
        axis = tuple(truth[0]["axis"])
        t0 = time.perf_counter()
        free = measure_cones(mask)
        t.times.append(time.perf_counter() - t0)
        hinted = measure_cones(mask, MeasureHints(axis=axis))
        boom = len(visible) >= 2
        for mode, meas in (("hint", hinted), ("free", free)):
            res = match_to_truth(meas, truth)
            t.missed[mode] += len(res.missed)
            t.extra[mode] += len(res.extra)
            for g in res.missed:
                t.bad.append((99.0, k, f"{mode}: missed nozzle {g} ({truth[g]['state']})"))
            for pair in res.pairs:
                nz, m = truth[pair.gt], meas[pair.meas]
                e = angle_errors(m, nz)
                if not math.isfinite(e["included"]):
                    t.bad.append((98.0, k, f"{mode}: nozzle {pair.gt} not measured {m.flags}"))
                    e = {key: 90.0 for key in e}  # count a failed measurement as a gross error
                t.errs[f"{mode} included"].append(e["included"])
                if mode == "hint" or (boom and m.axis_source == "boom"):
                    t.errs[f"{mode} half"].extend([e["left"], e["right"]])
                if mode == "hint":
                    for key in (
                        f"type {nz['nozzle_type']}",
                        f"nozzles {len(visible)}",
                        f"tilt {_tilt_bucket(nz['tilt_deg'])}",
                        f"state {nz['state']}",
                    ):
                        t.groups[key].append(e["included"])
                halves_count = mode == "hint" or m.axis_source == "boom"
                worst_e = max(abs(v) for v in e.values()) if halves_count else abs(e["included"])
                t.bad.append((worst_e, k, f"{mode}: nozzle {pair.gt} {nz['nozzle_type']} "
                              f"{nz['state']} inc {nz['included_angle_deg']:.1f} L "
                              f"{nz['length_px']:.0f} err {e} flags "
                              f"{[f.value for f in m.flags]}"))  # fmt: skip
    return t


def _report(t: _Tally, samples: list, worst: int) -> None:
    print(f"{len(samples)} images, {t.n_visible} visible nozzles")
    print(f"geometry time (no hint, this machine): median {1e3 * np.median(t.times):.2f} ms")
    for key in ("hint included", "hint half", "free included", "free half"):
        label = {
            "hint included": "included, axis hint",
            "hint half": "half-angles, axis hint",
            "free included": "included, no hint",
            "free half": "half-angles, no hint, boom axis",
        }[key]
        print(f"  {label:34s} {_stats(t.errs[key])}")
    for mode in ("hint", "free"):
        print(f"  {mode}: missed {t.missed[mode]}, extra {t.extra[mode]}")
    print("break-down (included-angle error, axis hint):")
    for key in sorted(t.groups):
        print(f"  {key:26s} {_stats(t.groups[key])}")
    if worst:
        print(f"worst {worst}:")
        for e, k, text in sorted(t.bad, reverse=True)[:worst]:
            print(f"  sample {k:4d} (seed {samples[k][1].get('seed')}): {e:6.2f}  {text}")


def evaluate(samples: list, worst: int) -> bool:
    t = _tally(samples)
    _report(t, samples, worst)
    ok = t.missed["hint"] == 0 and t.extra["hint"] == 0
    for key in ("hint included", "hint half"):
        a = np.abs(np.asarray(t.errs[key]))
        ok &= bool(a.size) and np.median(a) <= ACCEPT["median"]
        ok &= bool(a.size) and np.percentile(a, 95) <= ACCEPT["p95"]
    print("ACCEPTANCE", "PASS" if ok else "FAIL")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--cache", default=None, help="npz file to keep the rendered masks in")
    ap.add_argument("--worst", type=int, default=0, help="print the worst N cases")
    args = ap.parse_args()
    t0 = time.perf_counter()
    samples = load_samples(args.n, args.seed, args.size, args.workers, args.cache)
    print(f"rendered/loaded in {time.perf_counter() - t0:.1f} s")
    sys.exit(0 if evaluate(samples, args.worst) else 1)


if __name__ == "__main__":
    main()
