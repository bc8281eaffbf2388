"""Where a frame's time goes: the acceptance bench's frames through one pipeline, the time
inside each of its named steps, and the networks' costliest layers.

Two views of the same frames (3 nozzles, 512 x 512, as `spraycv bench` draws them):

- **steps**: each function of STEPS is wrapped by a timer for the run (inclusive ms a frame,
  and calls a frame; nested steps are counted in their callers too), beside the bench's own
  stages. Wrapping costs about a microsecond a call, far less than cProfile's tracing;
- **layers**: ONNX Runtime's own profiler over the model's and the refiner's files, at the
  batch sizes the pipeline gives them, its nodes summed by name (ms a run).

Usage: python benchmarks/frame_time.py --model M.int8.onnx [--frames 40] [--layers 12]
       (the refiner beside the model, as the pipeline finds it: M.int8.refiner.onnx)
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from spraycv.formats import refiner_companion
from spraycv.measure import load_measurer
from spraycv.runtime.bench import _one_frame, encoded_frames

STEPS = (  # (module, function) where the pipeline calls it: the name it is looked up by
    ("spraycv.measure", "measure_cones"),
    ("spraycv.measure", "assess"),
    ("spraycv.measure", "recover_missed"),
    ("spraycv.measure", "shaped_mask"),
    ("spraycv.refine.stage", "warp_crop"),
    ("spraycv.refine.stage", "preprocess"),
    ("spraycv.refine.stage", "side_lines"),
    ("spraycv.refine.stage", "channel_apex"),
    ("spraycv.refine.stage", "crop_support"),
    ("spraycv.refine.stage", "refined"),
    ("spraycv.refine.edges", "crop_edges"),
    ("spraycv.refine.edges", "near_apex"),
    ("spraycv.refine.edges", "pinned_line"),
    ("spraycv.geometry.plume", "fit_wedge"),
)
NETWORK_CALLS = ("segmenter", "refiner")  # the predictors' infer, timed the same way


class StepTimer:
    """Inclusive seconds and calls of wrapped callables, by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.calls: collections.Counter[str] = collections.Counter()

    def wrap(self, name: str, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            tic = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - tic
                self.calls[name] += 1

        return timed

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def wrap_steps(timer: StepTimer, measurer) -> None:
    """Wrap every step of STEPS where it is looked up, and the two networks' infer."""
    for module_name, attr in STEPS:
        module = importlib.import_module(module_name)
        setattr(module, attr, timer.wrap(f"{module_name.rsplit('.', 1)[-1]}.{attr}",
                                         getattr(module, attr)))  # fmt: skip
    for label, predictor in zip(NETWORK_CALLS, (measurer.segmenter, measurer.refiner.predictor),
                                strict=True):  # fmt: skip
        predictor.infer = timer.wrap(f"{label} network", predictor.infer)


def step_table(measurer, frames: list[bytes], warmup: int = 3) -> str:
    """The bench's stage medians and each step's inclusive ms and calls a frame."""
    timer = StepTimer()
    wrap_steps(timer, measurer)
    for data in frames[:warmup]:
        _one_frame(measurer.segmenter, data, measurer.refiner)
    timer.reset()
    stages = collections.defaultdict(list)
    for data in frames[warmup:]:
        for stage, seconds in _one_frame(measurer.segmenter, data, measurer.refiner).items():
            stages[stage].append(1000 * seconds)
    n = len(frames) - warmup
    lines = ["stage medians (ms): " + ", ".join(
        f"{s} {np.median(v):.2f}" for s, v in stages.items())]  # fmt: skip
    lines += ["| step | ms a frame | calls a frame |", "|---|---|---|"]
    for name, seconds in sorted(timer.seconds.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {name} | {1000 * seconds / n:.2f} | {timer.calls[name] / n:.1f} |")
    return "\n".join(lines)


def layer_table(path: Path, batch: int, top: int, runs: int = 30) -> str:
    """ONNX Runtime's profile of one file at one batch size: its costliest nodes."""
    import onnxruntime as ort

    from spraycv.runtime.onnx_backend import OnnxPredictor

    predictor = OnnxPredictor(path, "cpu")  # the pipeline's session options
    options = predictor.session.get_session_options()
    options.enable_profiling = True
    session = ort.InferenceSession(str(path), options, providers=predictor.providers)
    h, w = predictor.io.input_size
    x = np.random.default_rng(0).random((batch, 3, h, w), dtype=np.float32)
    for _ in range(runs):
        session.run(None, {session.get_inputs()[0].name: x})
    trace = Path(session.end_profiling())
    events = json.loads(trace.read_text())
    trace.unlink()
    node_us: dict[tuple[str, str], float] = collections.defaultdict(float)
    suffix = "_kernel_time"
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith(suffix):
            node = (event["name"][: -len(suffix)], event["args"]["op_name"])
            node_us[node] += event["dur"]
    total = sum(node_us.values()) / 1000 / runs
    lines = [f"{path.name}, batch {batch}: {total:.2f} ms a run in its nodes",
             "| node | op | ms a run |", "|---|---|---|"]  # fmt: skip
    for (name, op), us in sorted(node_us.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {name} | {op} | {us / 1000 / runs:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="an .onnx model file")
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--layers", type=int, default=12, help="nodes listed per file")
    args = parser.parse_args()
    if args.model.suffix != ".onnx":
        parser.error(f"{args.model}: an .onnx file (ONNX Runtime profiles its layers)")
    measurer = load_measurer(args.model, threads=2)
    if measurer.refiner is None:
        parser.error(f"no refiner beside {args.model}")
    refiner_file = refiner_companion(args.model)
    frames = encoded_frames(args.frames + 3, 512, 512, nozzles=3)
    print(f"{args.model}, {args.frames} frames, load average {os.getloadavg()[0]:.2f}")
    print(step_table(measurer, frames))
    print(layer_table(args.model, 1, args.layers))
    print(layer_table(refiner_file, 3, args.layers))


if __name__ == "__main__":
    main()
