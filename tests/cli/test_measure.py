from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.viz.overlay import NOTE_BG

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "data" / "samples"
runner = CliRunner()


def _records() -> list[dict]:
    return [json.loads(line) for line in (SAMPLES / "labels.jsonl").read_text().splitlines()]


def test_json_on_ground_truth_masks_matches_the_renderer():
    masks = [str(SAMPLES / r["mask"]) for r in _records()]
    result = runner.invoke(app, ["measure", "--json", *masks])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["input"] for r in rows} == {"mask"}
    by_source = {}
    for row in rows:
        by_source.setdefault(Path(row["source"]).name, []).append(row)
    for record in _records():
        measured = by_source[Path(record["mask"]).name]
        truth = sorted(n["included_angle_deg"] for n in record["nozzles"] if n["visible"])
        found = sorted(r["included_angle_deg"] for r in measured if r["included_angle_deg"])
        assert len(found) == len(truth), (record["mask"], found, truth)
        assert max(abs(a - b) for a, b in zip(found, truth, strict=True)) < 1.5


def test_table_and_overlays_for_images(tmp_path: Path):
    result = runner.invoke(
        app, ["measure", str(SAMPLES / "images"), "--overlay-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0].split()
    assert header[:3] == ["source", "nozzle", "included"]
    assert len(list(tmp_path.glob("*_overlay.png"))) == len(_records())


def test_a_corrupt_file_is_reported_and_the_rest_still_measured(tmp_path: Path):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8 not really a jpeg")
    good = SAMPLES / _records()[0]["mask"]
    result = runner.invoke(
        app, ["measure", "--json", str(bad), str(good), str(tmp_path / "no.png")]
    )
    assert result.exit_code == 1
    assert "broken.jpg: not a readable image" in result.stderr
    assert "no.png: no such file" in result.stderr
    assert "error: 2 of 3 inputs could not be measured" in result.stderr
    assert json.loads(result.stdout.splitlines()[0])["source"] == str(good)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--apex", "12"], "--apex takes two numbers"),
        (["--axis", "a,b"], "--axis takes two numbers"),
        (["--kind", "video"], "--kind must be auto, image or mask"),
        (["--band-start", "0.5", "--band-end", "0.2"], "must exceed start_frac"),
        (["--nominal-deg", "110"], "--nominal-deg and --tolerance-deg go together"),
        (["--tolerance-deg", "5"], "--nominal-deg and --tolerance-deg go together"),
        (["--nominal-deg", "200", "--tolerance-deg", "5"], "--nominal-deg: Input should be less"),
        (["--nominal-deg", "110", "--tolerance-deg", "0"], "--tolerance-deg: Input should be"),
    ],
)
def test_bad_options_say_what_is_wrong(args: list[str], message: str):
    result = runner.invoke(app, ["measure", str(SAMPLES / "masks"), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_every_command_has_help():
    for command in (
        ["--help"],
        ["measure", "--help"],
        ["synth", "--help"],
        ["train", "--help"],
        ["eval", "--help"],
        ["compare", "--help"],
        ["data", "check", "--help"],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code == 0, (command, result.output)
        assert "Usage" in result.output


def test_segmenter_choices(tmp_path: Path, tiny_checkpoint):
    image = str(SAMPLES / _records()[0]["image"])
    missing = runner.invoke(
        app,
        ["measure", image, "--segmenter", "model", "--weights", str(tmp_path / "no.safetensors")],
    )
    assert missing.exit_code == 2 and "cannot load the model" in missing.output
    weights = tiny_checkpoint(tmp_path)[0]
    ok = runner.invoke(app, ["measure", image, "--weights", str(weights), "--json"])
    assert ok.exit_code == 0, ok.output  # an untrained model: any answer, but no crash
    classical = runner.invoke(app, ["measure", image, "--segmenter", "classical", "--json"])
    assert classical.exit_code == 0 and "included_angle_deg" in classical.stdout


def test_readings_checked_against_a_spec(tmp_path: Path):
    """A test lab's nozzle spec: each reading ok or out of spec by its deviation, a frame
    without spray not measured, and a summary that counts them (stderr beside --json)."""
    import cv2
    import numpy as np

    black = tmp_path / "black.png"
    cv2.imwrite(str(black), np.zeros((64, 96, 3), np.uint8))
    masks = [str(SAMPLES / r["mask"]) for r in _records()]
    spec = ["--nominal-deg", "45", "--tolerance-deg", "3"]
    result = runner.invoke(app, ["measure", "--json", *masks, str(black), *spec])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    counts = {"ok": 0, "out_of_spec": 0, "unreliable": 0, "not_measured": 0}
    for row in rows:
        angle = row["included_angle_deg"]
        if row["unreliable"]:
            expected = "unreliable"
        elif angle is None:
            expected = "not_measured"
        else:
            expected = "out_of_spec" if abs(angle - 45) > 3 else "ok"
            assert row["spec_deviation_deg"] == pytest.approx(angle - 45)
        assert row["spec_status"] == expected, row
        counts[expected] += 1
    # the samples' true angles: 45.2 (x4) and 46.1 (x3) in, 36-78 out; the black frame
    assert counts["ok"] >= 6 and counts["out_of_spec"] >= 5 and counts["not_measured"] == 1
    summary = (
        f"spec 45 +- 3 deg: {counts['ok']} ok, {counts['out_of_spec']} out of spec, "
        f"{counts['unreliable']} unreliable, {counts['not_measured']} not measured"
    )
    assert summary in result.stderr
    table = runner.invoke(app, ["measure", masks[0], *spec, "--overlay-dir", str(tmp_path)])
    assert table.stdout.splitlines()[0].split()[-1] == "spec"
    assert " OUT -" in table.stdout.splitlines()[1]  # 36.3 deg against 45 +- 3
    assert table.stdout.splitlines()[-1].startswith("spec 45 +- 3 deg: 0 ok, 1 out of spec")
    (overlay,) = tmp_path.glob("*_overlay.png")  # the reading out of spec on red
    picture = cv2.imread(str(overlay))
    assert np.all(picture == np.array(NOTE_BG, np.uint8), axis=2).sum() > 100
