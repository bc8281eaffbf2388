"""The third drawer (benchmarks/photo_sprays.py): its truth is the project's kind of truth, so
`spraycv eval` reads its folders and its figures mean what the renderer's do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from repo_scripts import load_script

from spraycv.data.synth.styles import frame_style
from spraycv.evaluation.heldout import read_records
from spraycv.geometry import measure_cones
from spraycv.geometry.matching import angle_errors, match_to_truth
from spraycv.io.images import read_image, to_binary_mask


def test_its_true_masks_read_back_as_its_recorded_angles(tmp_path: Path) -> None:
    """The geometry reads the drawer's true masks at the angles it recorded (a boom's end
    plume that runs out of the frame, or plumes merged far out, may go unread)."""
    drawer = load_script("photo_sprays", "benchmarks")
    drawer.write(tmp_path, 10, seed=3)
    records = read_records(tmp_path)
    assert {frame_style(r) for r in records} == set(drawer.STYLES)
    included, nozzles, missed = [], 0, 0
    for record in records:
        truth = to_binary_mask(read_image(tmp_path / record["mask"]))
        measured = measure_cones(truth)
        match = match_to_truth(measured, record["nozzles"])
        nozzles, missed = nozzles + len(record["nozzles"]), missed + len(match.missed)
        for pair in match.pairs:
            errors = angle_errors(measured[pair.meas], record["nozzles"][pair.gt])
            included.append(abs(errors["included"]))
    assert nozzles >= 20 and missed <= 0.1 * nozzles
    assert np.median(included) < 0.3 and np.percentile(included, 90) < 0.6


def test_the_same_seed_draws_the_same_frames(tmp_path: Path) -> None:
    drawer = load_script("photo_sprays", "benchmarks")
    drawer.write(tmp_path / "a", 2, seed=5)
    drawer.write(tmp_path / "b", 2, seed=5)
    for name in ("labels.jsonl", "images/000001.jpg", "masks/000001.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
