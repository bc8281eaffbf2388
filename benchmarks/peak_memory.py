"""Where a large photo's memory goes: peak RSS of each step of the dashboard's Analyse path.

The fuzz test (tests/fuzz) bounds a whole process's peak at 1.5 GB with a 20-megapixel photo
in the batch; this script says which step sets that peak. The kernel's own peak (ru_maxrss)
is read before and after each step, so a buffer that lives a millisecond still counts; each
step is one of the pipeline's own functions, wrapped here (nothing in the package changes).
A step's figure includes the steps it calls ("whole photo" holds them all).

    python benchmarks/peak_memory.py --weights weights/default.safetensors [--size 5472x3648]
        [--warmup]

Run each model in its own process: the peak of a process never goes down.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import resource
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "images" / "000000.jpg"


def max_rss_bytes() -> int:
    """The process's peak RSS so far (it never goes down)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class StepPeaks:
    """How much each named step raised the process's peak RSS: exact, since the kernel keeps
    the peak (a sampler would miss a buffer that lives for a millisecond)."""

    def __init__(self) -> None:
        self.raised: dict[str, int] = {}
        self.peak_after: dict[str, int] = {}

    def charge(self, label: str, before: int) -> None:
        after = max_rss_bytes()
        self.raised[label] = self.raised.get(label, 0) + after - before
        self.peak_after[label] = after

    @contextlib.contextmanager
    def step(self, label: str) -> Iterator[None]:
        before = max_rss_bytes()
        try:
            yield
        finally:
            self.charge(label, before)

    def wrap(self, owner: object, name: str, label: str) -> None:
        """Charge what owner.name adds to the peak to `label`."""
        original: Callable = getattr(owner, name)

        @functools.wraps(original)
        def charged(*args, **kwargs):
            with self.step(label):
                return original(*args, **kwargs)

        setattr(owner, name, charged)


STEPS = (  # (module, function, label): the Analyse path's own functions, in order
    ("spraycv.dashboard.analyse", "decode_image", "decode"),
    ("spraycv.runtime.predictor", "preprocess", "preprocess"),
    ("spraycv.runtime.predictor.ModulePredictor", "infer", "network"),
    ("spraycv.runtime.predictor", "postprocess", "postprocess (full-size mask)"),
    ("spraycv.runtime.predictor", "apex_peaks", "apex peaks"),
    ("spraycv.measure", "measure_cones", "geometry"),
    ("spraycv.measure", "assess", "confidence"),
    ("spraycv.dashboard.analyse", "draw_overlay", "overlay"),
)


def _owner(path: str) -> object:
    module, _, attr = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        return getattr(importlib.import_module(module), attr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=Path, default=REPO / "weights" / "default.safetensors")
    parser.add_argument("--size", default="5472x3648", help="photo size WxH")
    parser.add_argument("--warmup", action="store_true", help="one small photo first")
    args = parser.parse_args()
    width, height = map(int, args.size.split("x"))

    peaks = StepPeaks()
    with peaks.step("imports"):
        from spraycv.dashboard import analyse
        from spraycv.runtime.predictor import load_predictor
    with peaks.step("model loaded"):
        predictor = load_predictor(args.weights, threads=1)
    sample = cv2.imread(str(SAMPLE))
    photo = cv2.resize(sample, (width, height), interpolation=cv2.INTER_AREA)
    upload = analyse.Upload("photo.jpg", "image", cv2.imencode(".jpg", photo)[1].tobytes())
    small = analyse.Upload("small.jpg", "image", cv2.imencode(".jpg", sample)[1].tobytes())
    del photo
    baseline = max_rss_bytes()
    for owner, name, label in STEPS:
        peaks.wrap(_owner(owner), name, label)
    if args.warmup:
        with peaks.step("small photo first"):
            analyse.analyse_upload(small, predictor, 12, None, width * height)
    with peaks.step("whole photo"):
        analysis = analyse.analyse_upload(upload, predictor, 12, None, width * height)
        for result in analysis.results:
            result.overlay_rgb()
    print(f"weights {args.weights}, photo {width}x{height}")
    print(f"  {'peak before the photo':34s}  {baseline / 2**20:5.0f} MiB")
    for label, raised in peaks.raised.items():
        after = peaks.peak_after[label] / 2**20
        print(f"  {label:34s} +{raised / 2**20:5.0f} MiB  (peak after {after:.0f})")
    print(f"  plumes measured: {sum(len(r.measurements) for r in analysis.results)}")


if __name__ == "__main__":
    main()
