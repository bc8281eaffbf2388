"""Training crops: rendered frames held in memory, cut at jittered poses around the truth."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from spraycv.config.refine import PoseJitter
from spraycv.refine.blur import blurred_crop
from spraycv.refine.pose import CropPose, crop_pose, pose_transform, warp_crop

MIN_LENGTH_PX = 20.0  # shorter plumes have no band to read


@dataclass(frozen=True)
class Target:
    """One nozzle of one frame: its index in the frame list, instance id and true pose."""

    frame: int
    instance: int
    apex: tuple[float, float]
    axis: tuple[float, float]
    length: float
    half_left: float
    half_right: float

    @property
    def included(self) -> float:
        return self.half_left + self.half_right


class CropSource:
    """The frames of a rendered dataset in memory and the nozzles a refiner can learn from."""

    def __init__(self, roots: Path | Sequence[Path], limit: int | None = None):
        """The frames of one rendered set (`roots` a path) or of several, `limit` of each."""
        roots = [Path(roots)] if isinstance(roots, str | Path) else [Path(r) for r in roots]
        self.images: list[np.ndarray] = []
        self.instances: list[np.ndarray] = []
        self.targets: list[Target] = []
        self.records: list[dict] = []
        self.name = ", ".join(str(r) for r in roots)  # for messages
        for root in roots:
            lines = (root / "labels.jsonl").read_text().splitlines()
            for record in [json.loads(x) for x in lines if x][:limit]:
                frame = len(self.images)
                self.records.append(record)
                self.images.append(cv2.imread(str(root / record["image"]), cv2.IMREAD_COLOR))
                self.instances.append(
                    cv2.imread(str(root / record["instances"]), cv2.IMREAD_UNCHANGED)
                )
                self.targets += [t for nz in record["nozzles"] if (t := _target(frame, nz))]
        if not self.targets:
            raise ValueError(f"{self.name}: no visible nozzle with a cone angle to learn from")
        # frames in which nothing sprays: any pose on them is a crop without a plume
        self.empty_frames = [i for i, inst in enumerate(self.instances) if not inst.any()]

    def crop(
        self, target: Target, pose: CropPose, size: int, blur: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(image crop (S, S, 3) uint8, soft target (S, S) float32 of this nozzle's spray,
        crop -> image transform (2, 3)); the image blurred by the kernel `blur` (image px)
        when one is given, the target never."""
        transform = pose_transform(pose, (size, size))
        image = _cut(self.images[target.frame], transform, size, blur)
        own = (self.instances[target.frame] == target.instance).astype(np.float32)
        truth = warp_crop(own, transform, (size, size))
        return image, truth, transform

    def empty_crop(
        self, frame: int, pose: CropPose, size: int, blur: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(image crop (S, S, 3) uint8, all-zero target (S, S) float32) of a crop where no
        nozzle sprays (spraycv.refine.negatives), blurred as `crop` blurs."""
        image = _cut(self.images[frame], pose_transform(pose, (size, size)), size, blur)
        return image, np.zeros((size, size), np.float32)


def _cut(image: np.ndarray, transform: np.ndarray, size: int, blur: np.ndarray | None):
    if blur is None:
        return warp_crop(image, transform, (size, size))
    return blurred_crop(image, transform, (size, size), blur)


def _target(frame: int, nz: dict) -> Target | None:
    included = nz.get("included_angle_deg")
    if not nz.get("visible") or included is None or not math.isfinite(included):
        return None
    if nz["length_px"] < MIN_LENGTH_PX:
        return None
    return Target(
        frame,
        int(nz["index"]) + 1,  # instance masks hold nozzle index + 1
        tuple(nz["apex"]),
        tuple(nz["axis"]),
        float(nz["length_px"]),
        float(nz["half_angle_left_deg"]),
        float(nz["half_angle_right_deg"]),
    )


def jittered_pose(target: Target, jitter: PoseJitter, rng: np.random.Generator) -> CropPose:
    """A pose around the truth with the coarse reading's typical errors."""
    shift = rng.normal(0.0, jitter.apex_frac * target.length + jitter.apex_px, size=2)
    turn = math.radians(rng.normal(0.0, jitter.axis_deg))
    ux, uy = target.axis
    axis = (ux * math.cos(turn) - uy * math.sin(turn), ux * math.sin(turn) + uy * math.cos(turn))
    length = target.length * math.exp(rng.normal(0.0, jitter.length_frac))
    widest = max(target.half_left, target.half_right) + rng.normal(0.0, jitter.half_angle_deg)
    apex = (target.apex[0] + shift[0], target.apex[1] + shift[1])
    return crop_pose(apex, axis, length, widest)


def rendered_crops(n: int, size: int, seed0: int, frame_size: int = 512) -> list[np.ndarray]:
    """n canonical crops (size, size, 3) uint8 BGR at the true poses of rendered nozzles,
    from frames seed0, seed0 + 1, ... (what a refiner sees: for calibration and parity)."""
    from spraycv.data.synth import render_sample

    crops: list[np.ndarray] = []
    seed = seed0
    while len(crops) < n:
        sample = render_sample(seed, frame_size)
        seed += 1
        for nz in sample.record["nozzles"]:
            target = _target(0, nz)
            if target is None or len(crops) >= n:
                continue
            widest = max(target.half_left, target.half_right)
            pose = crop_pose(target.apex, target.axis, target.length, widest)
            crops.append(warp_crop(sample.image, pose_transform(pose, (size, size)), (size, size)))
    return crops
