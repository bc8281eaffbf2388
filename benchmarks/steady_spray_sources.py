"""Why one frame of a steady spray scatters: the same steady frames read four ways.

1. model mask, as shipped (apex-head prior; what `steady_spray.py` reads);
2. model mask, the true apexes and axis given as hints (the apex search taken out);
3. as 2, with the band fixed in pixels (the band moving with the length taken out);
4. the truth mask, as shipped (the geometry alone).

Per way: the SD of each truth nozzle's raw included angle over the frames (nozzles matched
to the truth in every frame, so no tracking), and the IoU of consecutive model masks (how
much the masks flicker).

Usage: python benchmarks/steady_spray_sources.py [--frames 20] [--videos 6] [--threads 2]
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable

import numpy as np

from spraycv.config.geometry import BandConfig, GeometryConfig
from spraycv.data.synth import render_video_frames
from spraycv.evaluation.steadiness import SCENES
from spraycv.geometry import ConeMeasurement, MeasureHints, measure_cones
from spraycv.geometry.matching import match_to_truth
from spraycv.measure import load_measurer
from spraycv.paths import default_weights

Way = Callable[[object, object, dict], list[ConeMeasurement]]  # frame, segmentation, truth


def hinted(truth: dict, band: BandConfig | None = None) -> tuple[MeasureHints, GeometryConfig]:
    nozzles = truth["nozzles"]
    hints = MeasureHints(apex=[tuple(n["apex"]) for n in nozzles], axis=tuple(nozzles[0]["axis"]))
    return hints, GeometryConfig(band=band or BandConfig())


def fixed_band(truth: dict) -> BandConfig:
    """The default band of the shortest nozzle, in pixels: the same in every frame."""
    length = min(n["length_px"] for n in truth["nozzles"])
    default = BandConfig()
    return BandConfig(start_px=default.start_frac * length, end_px=default.end_frac * length)


def ways(measurer) -> dict[str, Way]:
    return {
        "model mask, as shipped": lambda f, s, t: (
            measurer.read_mask(s.mask, s.apexes, f.image, s.apex_strength).measurements
        ),
        "model mask, true apex and axis": lambda f, s, t: measure_cones(s.mask, *hinted(t)),
        "... and a fixed band": lambda f, s, t: measure_cones(s.mask, *hinted(t, fixed_band(t))),
        "truth mask, as shipped": lambda f, s, t: (
            measurer.read_mask(f.mask, s.apexes, f.image, s.apex_strength).measurements
        ),
    }


def angle_sds(frames, segs, way: Way) -> list[float]:
    """Per truth nozzle, the SD of its matched raw angles over the frames."""
    truth = frames[0].record
    per: dict[int, list[float]] = {}
    for frame, seg in zip(frames, segs, strict=True):
        found = way(frame, seg, truth)
        for pair in match_to_truth(found, truth["nozzles"]).pairs:
            per.setdefault(pair.gt, []).append(found[pair.meas].included_angle_deg)
    return [float(np.nanstd(a, ddof=1)) for a in per.values() if len(a) > 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--videos", type=int, default=6, help="seeds 0 to N - 1")
    ap.add_argument("--scene", default="boom", choices=list(SCENES))
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    measurer = load_measurer(default_weights(), threads=args.threads)
    for seed in range(args.videos):
        frames = list(render_video_frames(seed, args.frames, config=SCENES[args.scene],
                                          steady=True))  # fmt: skip
        segs = [measurer.segmenter.segment([f.image])[0] for f in frames]
        ious = [np.logical_and(a.mask, b.mask).sum() / max(np.logical_or(a.mask, b.mask).sum(), 1)
                for a, b in itertools.pairwise(segs)]  # fmt: skip
        print(f"seed {seed}: consecutive model masks IoU {np.mean(ious):.3f}")
        for name, way in ways(measurer).items():
            sds = angle_sds(frames, segs, way)
            print(f"  {name:32s} raw angle SD per nozzle: {np.round(sds, 2).tolist()}")


if __name__ == "__main__":
    main()
