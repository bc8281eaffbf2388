"""Crops without a plume, so that the refiner learns to draw nothing where nothing sprays.

Two kinds, both cut from the training frames:
- mined: the poses of the readings the coarse pipeline makes where no nozzle is (a lit
  bracket, a wet reflection, a black frame), found by running it on the training set once;
- random: poses anywhere on the frames in which nothing sprays at all.
Their target is an empty crop. A pose whose crop is mostly true spray (a plume read twice,
or from its far front) is not a negative and is left out.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from spraycv.geometry.matching import match_to_truth
from spraycv.refine.data import Target
from spraycv.refine.pose import CropPose, crop_pose, pose_transform, warp_crop
from spraycv.refine.stage import pose_of

MAX_SPRAY_SHARE = 0.1  # a crop with more true spray than this is not a negative
AXIS_SPREAD_DEG = 40.0  # random poses: the axis within this of straight down
LENGTH_FRAC = (0.2, 0.9)  # random poses: length as a share of the frame's shorter side
WIDEST_DEG = (5.0, 50.0)  # random poses: the wider side's half angle


@dataclass(frozen=True)
class NegativePose:
    """A reading made where no nozzle sprays: frame index in its dataset and crop pose."""

    frame: int
    apex: tuple[float, float]
    axis: tuple[float, float]
    length: float
    widest: float

    def pose(self) -> CropPose:
        return crop_pose(self.apex, self.axis, self.length, self.widest)


def spray_share(instances: np.ndarray, pose: CropPose, size: int) -> float:
    """The share of a (size, size) crop at `pose` covered by any nozzle's spray."""
    spray = (instances > 0).astype(np.uint8)
    crop = warp_crop(spray, pose_transform(pose, (size, size)), (size, size), interpolation=0)
    return float(crop.mean())


def mine_negatives(
    images: list[np.ndarray],
    instances: list[np.ndarray],
    records: list[dict],
    measurer,
    size: int,
) -> list[NegativePose]:
    """The false readings of `measurer` (a spraycv.measure.Measurer) on these frames."""
    found: list[NegativePose] = []
    for frame, (image, inst, record) in enumerate(zip(images, instances, records, strict=True)):
        measurements = measurer(image).measurements
        for i in match_to_truth(measurements, record["nozzles"]).extra:
            m, pose = measurements[i], pose_of(measurements[i])
            if pose is None or spray_share(inst, pose, size) > MAX_SPRAY_SHARE:
                continue
            widest = max(m.half_angle_left_deg, m.half_angle_right_deg)
            found.append(NegativePose(frame, m.apex, m.axis, m.length_px, widest))
    return found


def random_negative(frame: int, shape: tuple[int, int], rng: np.random.Generator) -> NegativePose:
    """A plume-shaped pose anywhere on a frame (of shape (H, W)) in which nothing sprays."""
    h, w = shape
    turn = math.radians(rng.uniform(-AXIS_SPREAD_DEG, AXIS_SPREAD_DEG))
    return NegativePose(
        frame,
        (float(rng.uniform(0, w - 1)), float(rng.uniform(0, h - 1))),
        (math.sin(turn), math.cos(turn)),
        float(rng.uniform(*LENGTH_FRAC) * min(h, w)),
        float(rng.uniform(*WIDEST_DEG)),
    )


def save_negatives(path: Path, negatives: list[NegativePose]) -> None:
    path.write_text("".join(json.dumps(asdict(n)) + "\n" for n in negatives))


def load_negatives(path: Path) -> list[NegativePose]:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line]
    return [
        NegativePose(r["frame"], tuple(r["apex"]), tuple(r["axis"]), r["length"], r["widest"])
        for r in rows
    ]


def as_target(negative: NegativePose) -> Target:
    """The negative as a refine.data.Target (no instance), to jitter it as the positives are."""
    return Target(negative.frame, 0, negative.apex, negative.axis, negative.length,
                  negative.widest, negative.widest)  # fmt: skip
