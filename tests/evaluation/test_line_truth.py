"""`spraycv eval` on line truth (lines.json): the round trip from the renderer's truth with a
perfect segmenter, a wrong label seen at its size, absent mask metrics, the choice of truth
by what the folder holds, and the `spraycv label lines` commands."""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.evaluation.heldout import EvalReport, evaluate_dataset, evaluate_frames, read_records
from spraycv.evaluation.line_truth import TruthMasks, labelled_frames
from spraycv.evaluation.truth import TRUTH_KINDS, truth_kind
from spraycv.label.lines import (
    LINES_FILE,
    ImageLines,
    LinesFile,
    LineTruthError,
    lines_from_records,
    load_lines,
    save_lines,
    turned_line,
)
from spraycv.measure import Measurer, Reading
from spraycv.paths import SAMPLES_DIR

runner = CliRunner()
ROUND_TRIP_DEG = 0.2  # issue 15: the line-truth round trip within 0.2 deg


@pytest.fixture(scope="module")
def perfect() -> TruthMasks:
    return TruthMasks(SAMPLES_DIR)


def _line_truth(folder: Path, truth: LinesFile | None = None) -> Path:
    """folder/lines.json holding the bundled samples' truth as lines (or `truth`)."""
    folder.mkdir(parents=True, exist_ok=True)
    root = os.path.relpath(SAMPLES_DIR, folder)
    save_lines(folder / LINES_FILE, truth or lines_from_records(read_records(SAMPLES_DIR), root))
    return folder


def _evaluate_lines(segmenter, folder: Path, progress: bool = True) -> EvalReport:
    """What `spraycv eval` runs on a folder with a lines.json."""
    return evaluate_frames(labelled_frames(folder), segmenter, progress)


def _errors(report: EvalReport) -> np.ndarray:
    return np.array([n["included_error_deg"] for f in report.frames for n in f.nozzles])


@pytest.fixture(scope="module")
def round_trip(perfect: TruthMasks, tmp_path_factory) -> tuple[EvalReport, EvalReport]:
    """(line truth, renderer truth) evaluations of the samples with their true masks."""
    folder = _line_truth(tmp_path_factory.mktemp("lines"))
    return _evaluate_lines(perfect, folder, progress=False), evaluate_dataset(
        perfect, SAMPLES_DIR, progress=False
    )


def test_line_truth_round_trip_matches_the_mask_truth(round_trip):
    lines, masks = round_trip
    assert [(f.missed, f.extra) for f in lines.frames] == [(0, 0)] * 6
    line_errors, mask_errors = _errors(lines), _errors(masks)
    assert line_errors.size == 13 and np.isfinite(line_errors).all()
    # the same readings scored on both truths: the lines add nothing
    assert np.abs(line_errors - mask_errors).max() < 1e-3
    # with the true mask, what is left is the geometry's own error
    assert np.abs(line_errors).mean() <= ROUND_TRIP_DEG
    assert np.median(np.abs(line_errors)) <= ROUND_TRIP_DEG


def test_line_truth_has_no_mask_metrics(round_trip):
    summary = round_trip[0].summary()
    assert summary["iou"] is None and summary["dice"] is None and summary["boundary_f1"] is None
    assert summary["nozzles"] == 13 and summary["angle_mae_deg"] <= ROUND_TRIP_DEG
    # the renderer path scores the mask: the true one, each plume redrawn from its reading
    assert round_trip[1].summary()["iou"] > 0.95


def _turned(truth: LinesFile, degrees: float) -> LinesFile:
    """The first nozzle of every photo with its first (left) line turned by `degrees`."""
    images = {}
    for key, entry in truth.images.items():
        first, *rest = entry.nozzles
        lines = (turned_line(first.lines[0], first.cone.apex, degrees), first.lines[1])
        images[key] = ImageLines(nozzles=[first.model_copy(update={"lines": lines}), *rest])
    return truth.model_copy(update={"images": images})


@pytest.mark.parametrize("degrees", [-3.0, 1.0, 5.0])
def test_a_wrongly_turned_label_shows_as_an_error_of_its_size(
    perfect, round_trip, tmp_path: Path, degrees: float
):
    truth = load_lines(_line_truth(tmp_path / "right") / LINES_FILE)
    wrong = _evaluate_lines(perfect, _line_truth(tmp_path / "wrong", _turned(truth, degrees)))
    right = round_trip[0]
    for good, bad in zip(right.frames, wrong.frames, strict=True):
        change = [
            b["included_error_deg"] - g["included_error_deg"]
            for g, b in zip(good.nozzles, bad.nozzles, strict=True)
        ]
        # turning the left line towards n_left widens the labelled cone: the error drops
        assert change[0] == pytest.approx(-degrees, abs=1e-3)
        assert change[1:] == pytest.approx([0.0] * len(change[1:]), abs=1e-9)


def test_unlabelled_photos_are_skipped_and_empty_ones_count_extra_plumes(perfect, tmp_path):
    truth = load_lines(_line_truth(tmp_path / "all") / LINES_FILE)
    keys = list(truth.images)
    images = {
        keys[0]: ImageLines(nozzles=[]),
        keys[1]: ImageLines(),
        keys[2]: truth.images[keys[2]],
    }
    report = _evaluate_lines(perfect, _line_truth(tmp_path / "some", LinesFile(images=images)))
    assert [f.id for f in report.frames] == [keys[0], keys[2]]
    assert (report.frames[0].n_truth, report.frames[0].extra) == (0, 1)
    assert (report.frames[1].missed, report.frames[1].extra) == (0, 0)


@dataclass(frozen=True)
class Untrusting(Measurer):
    """The pipeline on the true masks, every reading then marked unreliable."""

    def __call__(self, image: np.ndarray) -> Reading:
        reading = super().__call__(image)
        unsure = [replace(m, unreliable="test") for m in reading.measurements]
        return replace(reading, measurements=unsure)


def test_unreliable_readings_count_alike_on_both_truths(perfect, tmp_path: Path):
    """A reading that says it cannot be trusted is neither an angle nor a false plume on
    line truth either (it was both there, and neither on the renderer's truth)."""
    truth = load_lines(_line_truth(tmp_path / "all") / LINES_FILE)
    first, *_ = truth.images
    images = {**truth.images, first: ImageLines(nozzles=[])}  # its plumes: read, of no nozzle
    folder = _line_truth(tmp_path / "some", LinesFile(images=images))
    unsure = Untrusting(perfect)
    lines = _evaluate_lines(unsure, folder, progress=False).summary()
    masks = evaluate_dataset(unsure, SAMPLES_DIR, progress=False).summary()
    flagged = lines["flagged_false_plumes"]
    assert lines["unreliable_nozzles"] == masks["unreliable_nozzles"] - flagged
    assert flagged >= 1 and lines["extra_plumes"] == 0
    for summary in (lines, masks):
        assert summary["unreliable_nozzles"] > 0 and math.isnan(summary["angle_mae_deg"])


@pytest.mark.parametrize(
    ("images", "error"),
    [
        ({"a.jpg": ImageLines()}, "lines.json: no photo is labelled yet"),
        ({"a.jpg": ImageLines(nozzles=[])}, 'lines.json: images["a.jpg"]: no such file in'),
    ],
)
def test_line_truth_that_cannot_be_evaluated_says_why(tmp_path, images, error):
    save_lines(tmp_path / LINES_FILE, LinesFile(images=images))
    with pytest.raises(LineTruthError, match=re.escape(error)):
        _evaluate_lines(lambda image: image, tmp_path)


# (files the folder holds, --truth, the kind read or the error)
KINDS = [
    ((), "auto", "truth not found: no labels.jsonl (a rendered dataset) and no lines.json"),
    (("labels.jsonl",), "auto", "rendered"),
    (("lines.json",), "auto", "lines"),
    (("labels.jsonl", "lines.json"), "auto", "rendered"),  # the richer truth wins
    (("labels.jsonl", "lines.json"), "lines", "lines"),
    (("labels.jsonl",), "lines", "truth not found: no lines.json (line truth"),
]


@pytest.mark.parametrize(("files", "choice", "expected"), KINDS)
def test_the_truth_is_chosen_by_what_the_folder_holds(tmp_path, files, choice, expected):
    for name in files:
        (tmp_path / name).write_text("")
    if expected in TRUTH_KINDS:
        assert truth_kind(tmp_path, choice) is TRUTH_KINDS[expected]
    else:
        with pytest.raises(FileNotFoundError, match=re.escape(expected)):
            truth_kind(tmp_path, choice)


# --- the commands ----------------------------------------------------------------------


def test_eval_on_line_truth_reports_angles_and_absent_mask_metrics(tmp_path: Path):
    folder = tmp_path / "photos"
    made = runner.invoke(
        app, ["label", "lines-from-render", str(SAMPLES_DIR), "--out", str(folder / LINES_FILE)]
    )
    assert made.exit_code == 0 and "6 frames, 13 nozzles written" in made.output
    out = tmp_path / "eval"
    result = runner.invoke(
        app, ["eval", "--weights", "classical", "--data", str(folder), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["iou"] is None and metrics["frames"] == 6 and metrics["nozzles"] == 13
    assert "mask metrics (iou, dice, boundary_f1) are absent" in result.output
    assert (out / "worst_cases.png").is_file() and (out / "angle_error_hist.png").is_file()
    frame = json.loads((out / "frames.jsonl").read_text().splitlines()[0])
    assert frame["style"] == "line_truth" and frame["iou"] is None
    assert {"included_error_deg", "apex_error_px"} <= set(frame["nozzles"][0])


def test_eval_on_a_bad_lines_file_is_one_line_naming_the_entry(tmp_path: Path):
    (tmp_path / LINES_FILE).write_text('{"images": {"a.jpg": {"nozzles": [{"lines": []}]}}}')
    result = runner.invoke(app, ["eval", "--weights", "classical", "--data", str(tmp_path)])
    assert result.exit_code == 2
    entry = 'images["a.jpg"].nozzles[0].lines[0]: Field required (and 1 more)'
    assert result.stderr == f"error: {tmp_path / LINES_FILE}: {entry}\n"


def test_label_lines_headless_writes_an_entry_per_photo_and_checks_the_file(tmp_path: Path):
    import cv2

    for name in ("b.png", "a.png"):
        cv2.imwrite(str(tmp_path / name), np.zeros((64, 64), np.uint8))
    first = runner.invoke(app, ["label", "lines", str(tmp_path), "--headless"])
    assert first.exit_code == 0, first.output
    truth = load_lines(tmp_path / LINES_FILE)
    assert list(truth.images) == ["a.png", "b.png"] and not truth.labelled()
    assert "2 photo(s): 0 labelled (0 nozzle(s)), 2 not labelled yet" in first.output

    half = math.tan(math.radians(15))
    nozzle = (
        f'[{{"lines": [[[32, 10], [{32 - 40 * half}, 50]], [[32, 10], [{32 + 40 * half}, 50]]]}}]'
    )
    text = (tmp_path / LINES_FILE).read_text()
    text = text.replace('"a.png": {\n      "nozzles": null', f'"a.png": {{"nozzles": {nozzle}')
    (tmp_path / LINES_FILE).write_text(text)
    second = runner.invoke(app, ["label", "lines", str(tmp_path), "--headless"])
    assert "a.png: 1 nozzle(s): 30.0 deg at (32, 10)" in second.output
    assert "2 photo(s): 1 labelled (1 nozzle(s)), 1 not labelled yet" in second.output


def test_label_lines_on_a_bad_file_exits_2_naming_the_entry(tmp_path: Path):
    import cv2

    cv2.imwrite(str(tmp_path / "a.png"), np.zeros((64, 64), np.uint8))
    (tmp_path / LINES_FILE).write_text('{"images": {"a.png": {"nozzles": [{"lines": 3}]}}}')
    result = runner.invoke(app, ["label", "lines", str(tmp_path), "--headless"])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f'error: {tmp_path / LINES_FILE}: images["a.png"].nozzles[0].lines: '
    )
