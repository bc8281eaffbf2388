from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from spraycv.cli.app import app

runner = CliRunner()


def test_config_file_and_overrides_reach_the_renderer(tmp_path: Path):
    cfg = tmp_path / "render.yaml"
    cfg.write_text("appearance:\n  prob_back_lit: 1.0\n")
    out = tmp_path / "ds"
    args = [
        "synth",
        "-c",
        str(cfg),
        "nozzle.prob_single=1.0",
        "--out",
        str(out),
        "--n",
        "2",
        "--size",
        "128",
        "--workers",
        "1",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "dataset.json").read_text())
    records = [json.loads(x) for x in (out / "labels.jsonl").read_text().splitlines()]
    assert {r["lighting"] for r in records} == {"back"}
    assert {len(r["nozzles"]) for r in records} == {1}
    assert json.dumps(meta)  # written


def test_unknown_key_is_refused(tmp_path: Path):
    result = runner.invoke(
        app, ["synth", "nozzle.nope=1", "--out", str(tmp_path / "x"), "--n", "1"]
    )
    assert result.exit_code == 2
    assert "nozzle.nope" in result.output
