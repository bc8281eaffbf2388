"""Side-by-side CPU/GPU benchmark of predictors: latency per stage and end-to-end frames/s.

All backends are timed in one run, in rounds: each round times every backend on its share
of the frames, one backend after the other, after a short warm-up. Rounds spread a change
of machine load over all backends; blocks (not frame-by-frame interleaving) keep one
runtime's idle threads, which spin for a while after each call, from slowing the next one.
Figures are medians over the frames.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

STAGES = ("decode", "preprocess", "inference", "postprocess", "geometry", "refine")
E2E_STAGES = STAGES[1:]  # end to end, decode excluded (a camera hands over decoded frames)
REFERENCE = "pytorch"


@dataclass
class BackendTiming:
    """Median milliseconds per stage of one backend."""

    label: str
    stages: dict[str, float] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)

    @property
    def e2e_ms(self) -> float:
        return sum(self.stages[s] for s in E2E_STAGES)

    @property
    def fps(self) -> float:
        return 1000.0 / self.e2e_ms if self.e2e_ms > 0 else float("inf")


def encoded_frames(
    n: int, height: int, width: int, seed0: int = 3_000_000, nozzles: int | None = None
) -> list[bytes]:
    """n rendered frames of (height, width), JPEG-encoded so that decoding is measured too;
    with `nozzles`, only frames with that many spraying nozzles (seeds tried in order)."""
    from spraycv.data.synth import render_sample

    frames, seed = [], seed0
    while len(frames) < n:
        sample = render_sample(seed, width, height=height)
        seed += 1
        spraying = [nz for nz in sample.record["nozzles"] if nz.get("visible")]
        if nozzles is not None and len(spraying) != nozzles:
            continue
        _, data = cv2.imencode(".jpg", sample.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        frames.append(data.tobytes())
    return frames


def _one_frame(predictor: Any, data: bytes, refiner: Any = None) -> dict[str, float]:
    """Seconds per stage for one frame through one predictor (batch 1) and its refiner."""
    from spraycv.io.exposure import is_blank
    from spraycv.measure import Measurer
    from spraycv.runtime.predictor import Segmentation
    from spraycv.runtime.processing import apex_peaks, postprocess, preprocess

    times: dict[str, float] = {}
    tic = time.perf_counter()
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    times["decode"], tic = time.perf_counter() - tic, time.perf_counter()
    is_blank(image)  # the pipeline's check for a flat frame (Predictor._one_pass)
    batch = preprocess([image], predictor.io)
    times["preprocess"], tic = time.perf_counter() - tic, time.perf_counter()
    logits = predictor.infer(batch)
    times["inference"], tic = time.perf_counter() - tic, time.perf_counter()
    mask = postprocess(logits, [image.shape[:2]], predictor.io)[0]
    apexes, strength = apex_peaks(logits, [image.shape[:2]], predictor.io)[0]
    times["postprocess"], tic = time.perf_counter() - tic, time.perf_counter()
    seg = predictor.second_look(image, Segmentation(mask, apexes, strength))
    mask, apexes, strength = seg.mask, seg.apexes, seg.apex_strength
    times["inference"] += time.perf_counter() - tic  # a small spray's second look, if any
    tic = time.perf_counter()
    prior = apexes if predictor.has_apex_head else None
    measurer = Measurer(predictor, refiner=refiner)
    coarse = measurer.coarse_readings(mask, prior, strength)
    times["geometry"], tic = time.perf_counter() - tic, time.perf_counter()
    reading = measurer.finish_reading(mask, prior, image, coarse)
    measurer.completed(image, reading)  # tiles, and the turned look, where a frame asks
    times["refine"] = time.perf_counter() - tic
    return times


def run_bench(
    predictors: Mapping[str, Any],
    frames: Sequence[bytes],
    warmup: int = 3,
    rounds: int = 5,
    refiners: Mapping[str, Any] | None = None,
) -> list[BackendTiming]:
    """Time every predictor (with its refiner, by label, where there is one) on every frame,
    in rounds of per-backend blocks; medians in ms."""
    refiners = refiners or {}
    timings = {label: BackendTiming(label, samples={s: [] for s in STAGES}) for label in predictors}
    rounds = max(1, min(rounds, len(frames)))
    for r in range(rounds):
        block = frames[r::rounds]
        for label, predictor in predictors.items():
            for data in block[: max(warmup, 0)] if r == 0 else block[:1]:  # untimed warm-up
                _one_frame(predictor, data, refiners.get(label))
            for data in block:
                for stage, seconds in _one_frame(predictor, data, refiners.get(label)).items():
                    timings[label].samples[stage].append(1000.0 * seconds)
    for timing in timings.values():
        timing.stages = {s: float(np.median(v)) for s, v in timing.samples.items()}
    return list(timings.values())


def ratios(timings: Sequence[BackendTiming]) -> dict[str, dict[str, float]]:
    """Speed-up of each backend against PyTorch eager: inference and end to end."""
    ref = next((t for t in timings if t.label == REFERENCE), None)
    if ref is None:
        return {}
    return {
        t.label: {
            "inference": ref.stages["inference"] / t.stages["inference"],
            "e2e": ref.e2e_ms / t.e2e_ms,
        }
        for t in timings
    }


def to_json(timings: Sequence[BackendTiming], context: Mapping[str, Any]) -> dict[str, Any]:
    """The figures as a JSON-able dict (medians, fps, ratios and how they were measured)."""
    speedups = ratios(timings)
    return {
        **context,
        "backends": {
            t.label: {
                "stages_ms": t.stages,
                "e2e_ms": t.e2e_ms,
                "fps": t.fps,
                "speedup_vs_pytorch": speedups.get(t.label),
            }
            for t in timings
        },
    }


def side_by_side(
    predictors: Mapping[str, Any], refiners: Mapping[str, Any], frames: int, size: int, nozzles: int
) -> str:
    """Every labelled pipeline timed on the same `frames` rendered frames (size x size px,
    `nozzles` sprays each), as run_bench does: a line on the run and the machine's load, then
    format_table's table (the benchmarks that compare pipelines in one run print this)."""
    timings = run_bench(
        predictors, encoded_frames(frames, size, size, nozzles=nozzles), refiners=refiners
    )
    head = (
        f"{frames} frames {size}x{size}, {nozzles} nozzles, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    return "\n".join([head, format_table(timings)])


def format_table(timings: Sequence[BackendTiming]) -> str:
    """A plain-text table: one row per backend, stage medians in ms, fps and ratios."""
    speedups = ratios(timings)
    head = ["backend", *STAGES, "e2e", "fps", "infer x", "e2e x"]
    rows = [head]
    for t in timings:
        r = speedups.get(t.label, {})
        rows.append(
            [t.label]
            + [f"{t.stages[s]:.2f}" for s in STAGES]
            + [f"{t.e2e_ms:.2f}", f"{t.fps:.1f}"]
            + [f"{r[k]:.2f}" if k in r else "-" for k in ("inference", "e2e")]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    note = (
        "ms, medians; e2e = every stage but decode (a camera hands over decoded frames); "
        "refine = the refiner, confidence, recovered plumes and the redrawn mask "
        "(Measurer.finish_reading), tiles where a frame takes them and the turned look where "
        "its sprays point sideways or up (Measurer.completed)"
    )
    return "\n".join([*lines, note])
