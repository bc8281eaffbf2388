"""Write the bundled samples into data/samples/ (deterministic; rerun to regenerate).

    data/samples/images/*.jpg, masks/*.png, instances/*.png, labels.jsonl, dataset.json
    data/samples/video.mp4 (+ video.jsonl, per-frame ground truth)

Six images chosen to cover the main cases (front- and back-lit, one nozzle and booms,
flat fan / hollow cone / full cone, a tilted one, a rotated camera), in the layout of
`spraycv.data.synth.write_dataset`.

Usage: python scripts/make_samples.py [--out data/samples]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from spraycv import __version__
from spraycv.config.render import RenderConfig
from spraycv.data.synth import render_sample, render_video
from spraycv.data.synth.writer import save_sample

_CLEAN = {"camera": {"prob_jpeg": 0.0, "read_noise_range": (0.003, 0.012)}}
_ON = {"state_probs": {"on": 1.0}}
_LAB = {"front_background_probs": {"lab": 1.0}}
_UPRIGHT = {"prob_rotated_camera": 0.0}
# (name, seed, appearance overrides, nozzle overrides): each pins what the sample shows.
SAMPLES: list[tuple[str, int, dict[str, Any], dict[str, Any]]] = [
    (
        "front_flat_fan",
        4,
        {"prob_back_lit": 0.0, "prob_color": 1.0, **_LAB},
        {"prob_single": 1.0, "prob_straight_down": 1.0, "type_probs": {"flat_fan": 1.0}}
        | _UPRIGHT
        | _ON,
    ),
    (
        "back_hollow_cone",
        5,
        {"prob_back_lit": 1.0, "prob_color": 0.0},
        {"prob_single": 1.0, "type_probs": {"hollow_cone": 1.0}}
        | {"included_deg_range": (60.0, 100.0), "prob_catalogue_angle": 0.0}
        | _UPRIGHT
        | _ON,
    ),
    (
        "front_boom_flat_fans",
        3,
        {"prob_back_lit": 0.0, "prob_color": 1.0},
        {"prob_single": 0.0, "n_boom_range": (5, 6), "type_probs": {"flat_fan": 1.0}}
        | {"catalogue_angles_deg": [40.0, 50.0]}
        | {"state_probs": {"on": 0.7, "weak": 0.1, "clogged": 0.1, "off": 0.1}}
        | _UPRIGHT,
    ),
    (
        "front_full_cone_tilted",
        6,
        {"prob_back_lit": 0.0, "prob_color": 0.0, **_LAB},
        {"prob_single": 1.0, "prob_straight_down": 0.0, "tilt_deg_range": (22.0, 30.0)}
        | {"type_probs": {"full_cone": 1.0}, "included_deg_range": (50.0, 110.0)}
        | _UPRIGHT
        | _ON,
    ),
    (
        "back_boom_full_cones",
        5,
        {"prob_back_lit": 1.0, "prob_color": 1.0},
        {"prob_single": 0.0, "n_boom_range": (3, 3), "type_probs": {"full_cone": 1.0}}
        | {"catalogue_angles_deg": [40.0, 65.0]}
        | _UPRIGHT
        | _ON,
    ),
    (
        "front_rotated_worn_flat_fan",
        0,
        {"prob_back_lit": 0.0, "prob_color": 1.0, **_LAB},
        {"prob_single": 1.0, "prob_rotated_camera": 1.0, "camera_roll_deg_range": (70.0, 110.0)}
        | {"prob_straight_down": 1.0, "prob_asymmetric": 1.0, "asymmetry_max_deg": 10.0}
        | {"type_probs": {"flat_fan": 1.0}}
        | _ON,
    ),
]
VIDEO_SEED = 3
VIDEO_CONFIG: dict[str, Any] = {
    "appearance": {"prob_back_lit": 0.0, "prob_color": 1.0, "prob_frozen": 1.0, **_LAB},
    "nozzle": {"prob_single": 0.0, "n_boom_range": (3, 3), "type_probs": {"flat_fan": 1.0}}
    | {"catalogue_angles_deg": [65.0, 80.0]}
    | _UPRIGHT
    | _ON,
    "camera": {"prob_motion_blur": 0.0, "prob_defocus": 0.0, "exposure_log2_range": (-0.3, 0.3)}
    | {"read_noise_range": (0.003, 0.008), "shot_noise_range": (0.0, 0.01)},
}


def _config(overrides: dict[str, Any]) -> RenderConfig:
    merged: dict[str, Any] = {k: dict(v) for k, v in _CLEAN.items()}
    for section, values in overrides.items():
        merged.setdefault(section, {}).update(values)
    return RenderConfig.model_validate(merged)


def main(out: Path, size: int = 512) -> None:
    for sub in ("images", "masks", "instances"):
        shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    records, meta = [], []
    for i, (name, seed, appearance, nozzle) in enumerate(SAMPLES):
        cfg = _config({"appearance": appearance, "nozzle": nozzle})
        res = render_sample(seed, size, cfg, sample_id=f"{i:06d}")
        rec = save_sample(out, f"{i:06d}", res, "jpg")
        rec["name"] = name
        records.append(rec)
        meta.append({"name": name, "seed": seed, "render_config": cfg.model_dump(mode="json")})
    with (out / "labels.jsonl").open("w") as f:
        f.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    info = {"spraycv_version": __version__, "n": len(records), "size": size, "samples": meta}
    (out / "dataset.json").write_text(json.dumps(info, indent=2) + "\n")
    video_cfg = _config(VIDEO_CONFIG)
    render_video(
        out / "video.mp4", VIDEO_SEED, n_frames=36, fps=10, width=640, height=480, config=video_cfg
    )
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {len(records)} images and a 36-frame video to {out} ({total / 1e6:.2f} MB)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "data" / "samples")
    main(parser.parse_args().out)
