"""Frames per second through a stream of the acceptance bench's frames, side by side in one
run: one frame at a time (`Measurer.__call__`), the camera daemon's two stages (the model on
one thread, the geometry, refiner and tiles of the frame before on a second, a queue of two
between them, as `spraycv.stream.worker.InferenceWorker` runs them) and, with --processes N,
N frames in flight (N worker processes, each its own pipeline with cores / N runtime threads;
experiments row 196).

`spraycv bench` reports the median frame's latency. A stream's rate is set by its mean frame
instead, and the frames that take tiles or hold many plumes are in the mean, not the median
(docs/experiments.md, row 156). Every mode reads the same measurements; the script checks it.

Usage: python benchmarks/stream_rate.py --model M.onnx [--frames 60] [--rounds 2] [--threads 2]
       [--processes 2]
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

from spraycv.measure import Measurer, Reading, load_measurer
from spraycv.runtime.bench import encoded_frames

NOZZLES, SIZE = 3, 512  # the acceptance bench's frames (issue 13)
STAGE_QUEUE = 2  # as the daemon's queue between its model and measure threads


def one_at_a_time(measurer: Measurer, images: Sequence[np.ndarray]) -> list[Reading]:
    """Each frame read end to end before the next one starts."""
    return [measurer(image) for image in images]


_WORKER: dict[str, Measurer] = {}  # each worker process's own pipeline (spawned, not shared)


def _load_worker(model: Path, threads: int) -> None:
    _WORKER["measurer"] = load_measurer(model, threads=threads)


def _worker_angles(image: np.ndarray) -> list[float]:
    return angles([_WORKER["measurer"](image)])[0]


def in_flight(pool, measurer: Measurer, images: Sequence[np.ndarray]) -> list[list[float]]:
    """Frames handed to the pool's workers as they come free, in order (`measurer` unused:
    each worker loaded its own)."""
    return pool.map(_worker_angles, images, chunksize=1)


def two_stages(measurer: Measurer, images: Sequence[np.ndarray]) -> list[Reading]:
    """The daemon's split: the model segments frame k+1 while frame k is measured."""
    masks: queue.Queue = queue.Queue(maxsize=STAGE_QUEUE)
    readings: list[Reading] = []

    def segment() -> None:
        for image in images:
            (seg,) = measurer.segmenter.segment([image])  # type: ignore[attr-defined]
            masks.put((image, seg))
        masks.put(None)

    def measure() -> None:
        while (item := masks.get()) is not None:
            image, seg = item
            readings.append(measurer.read_segmented(image, seg.mask, seg.apexes, seg.apex_strength))

    threads = [threading.Thread(target=segment), threading.Thread(target=measure)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return readings


Mode = Callable[[Measurer, Sequence[np.ndarray]], list[Reading] | list[list[float]]]
MODES: dict[str, Mode] = {
    "one at a time": one_at_a_time,
    "two stages (daemon)": two_stages,
}


def angles(readings: Sequence[Reading] | list[list[float]]) -> list[list[float]]:
    """Each frame's included angles (a mode that ran elsewhere hands them over as such)."""
    return [r if isinstance(r, list) else [round(m.included_angle_deg, 9) for m in r.measurements]
            for r in readings]  # fmt: skip


def frame_ms(measurer: Measurer, images: Sequence[np.ndarray]) -> np.ndarray:
    """(N,) each frame's end-to-end milliseconds, read one at a time."""
    out = []
    for image in images:
        tic = time.perf_counter()
        measurer(image)
        out.append(1000 * (time.perf_counter() - tic))
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help=".onnx or .safetensors")
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2, help="each mode timed this often")
    parser.add_argument("--threads", type=int, default=None, help="runtime threads")
    parser.add_argument("--processes", type=int, default=0, help="also N frames in flight")
    args = parser.parse_args()
    measurer = load_measurer(args.model, threads=args.threads)
    images = [cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
              for data in encoded_frames(args.frames, SIZE, SIZE, nozzles=NOZZLES)]  # fmt: skip
    one_at_a_time(measurer, images[:3])  # warm-up
    modes, pool = dict(MODES), None
    if args.processes > 1:  # started and warmed up before any timing
        per = max(1, (args.threads or os.cpu_count() or 1) // args.processes)
        pool = multiprocessing.get_context("spawn").Pool(
            args.processes, _load_worker, (args.model, per)
        )
        pool.map(_worker_angles, images[: 2 * args.processes], chunksize=1)
        modes[f"{args.processes} processes x {per} threads"] = functools.partial(in_flight, pool)
    rates: dict[str, list[float]] = {mode: [] for mode in modes}
    read: dict[str, list[list[float]]] = {}
    for _ in range(args.rounds):  # rounds spread a change of machine load over every mode
        for mode, run in modes.items():
            tic = time.perf_counter()
            read[mode] = angles(run(measurer, images))
            rates[mode].append(len(images) / (time.perf_counter() - tic))
    if pool is not None:
        pool.close()
    same = len({str(v) for v in read.values()}) == 1
    ms = frame_ms(measurer, images)
    print(f"{args.model}, {len(images)} frames of {NOZZLES} nozzles at {SIZE} px, threads "
          f"{args.threads or 'all'}, load average {os.getloadavg()[0]:.2f}")  # fmt: skip
    median, mean, p90 = np.median(ms), ms.mean(), np.percentile(ms, 90)
    print(f"one frame's ms: median {median:.1f} ({1000 / median:.1f} frames/s), "
          f"mean {mean:.1f} ({1000 / mean:.1f} frames/s), p90 {p90:.1f}")  # fmt: skip
    print("| mode | frames/s (each round) |\n|---|---|")
    for mode, values in rates.items():
        print(f"| {mode} | {' / '.join(f'{v:.1f}' for v in values)} |")
    print("every mode reads the same angles" if same else "THE MODES READ DIFFERENT ANGLES")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
