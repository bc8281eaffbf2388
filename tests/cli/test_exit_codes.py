"""The CLI's error contract (README, "Exit codes"): every command, given a bad argument,
prints one `error:` line (or Click's usage error) and exits with its documented code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import BaseModel
from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.cli.errors import ExitCode, bad_request, exits, inputs_failed, one_line

REPO = Path(__file__).resolve().parents[2]
IMAGE = str(REPO / "data" / "samples" / "images" / "000000.jpg")
runner = CliRunner()
OK, FAILED, BAD = ExitCode.OK, ExitCode.INPUTS_FAILED, ExitCode.BAD_REQUEST

# (command line, with {tmp} for an empty folder; exit code; text the error must hold).
# Every command of the app has a row: test_every_command_is_in_the_table keeps it so.
CASES: list[tuple[list[str], ExitCode, str]] = [
    (["measure", "{tmp}"], BAD, "nothing to measure: {tmp}: the folder holds no image files"),
    (["measure", "http://127.0.0.1:9/x.mjpg"], BAD, "`spraycv predict` reads streams"),
    (["measure", str(REPO / "data/samples/video.mp4")], BAD, "`spraycv predict` reads videos"),
    (["measure", "{tmp}/*.png"], BAD, "{tmp}/*.png: the pattern matches no file"),
    (["predict", "{tmp}"], BAD, "nothing to measure"),
    (["predict", IMAGE, "--weights", "{tmp}/missing.pt"], BAD, "no backend for suffix '.pt'"),
    (["export"], BAD, "--weights is required (--list shows the formats)"),
    (["export", "--weights", "{tmp}/no.safetensors"], BAD, "not found: {tmp}/no.safetensors"),
    (["bench", "--weights", "{tmp}/no.safetensors"], BAD, "not found: {tmp}/no.safetensors"),
    (
        ["calibrate", "{tmp}/no.png", "--points", "1,2,3,4", "--distance-mm", "5"],
        FAILED,
        "{tmp}/no.png: no such file",
    ),
    (["daemon", "--config", "{tmp}/no.yaml"], BAD, "config file not found"),
    (["dashboard", "--port", "abc"], BAD, "Invalid value for '--port'"),
    (["data", "check", "{tmp}/nothing"], FAILED, "{tmp}/nothing: no such file or folder"),
    (["eval", "--weights", "{tmp}/no.safetensors", "--data", "{tmp}"], BAD, "not found"),
    (
        ["eval", "--weights", "classical", "--data", "{tmp}"],
        BAD,
        "{tmp}: truth not found: no labels.jsonl (a rendered dataset) and no lines.json",
    ),
    (["eval", "--weights", "classical", "--data", "{tmp}", "--truth", "x"], BAD, "--truth"),
    (["compare", "{tmp}/no.yaml", "--test-data", "{tmp}"], BAD, "config file not found"),
    (["synth", "--out", "{tmp}/s", "--n", "1", "no_such_key=1"], BAD, "no_such_key"),
    (["train", "--config", "{tmp}/no.yaml"], BAD, "config file not found"),
    (["finetune", "--epochs", "1", "--steps", "1"], BAD, "give --epochs or --steps, not both"),
    (["apex-head", "--epochs", "0"], BAD, "epochs: Input should be greater than or equal to 1"),
    (["label", "propose", "{tmp}"], BAD, "no images in {tmp}"),
    (["label", "lines", "{tmp}"], BAD, "no images in {tmp}"),
    (["label", "lines-from-render", "{tmp}"], BAD, "{tmp}: labels.jsonl not found"),
    (["refiner", "train", "--config", "{tmp}/no.yaml"], BAD, "config file not found"),
    (["db", "migrate", "{tmp}/no/db.sqlite"], BAD, "{tmp}/no/db.sqlite: cannot open the database"),
    (["db", "grant", "{tmp}/db.sqlite", "--daemon-role", "A-b"], BAD, "role name 'A-b'"),
    (["db", "prune", "{tmp}/no/db.sqlite", "--days", "1"], BAD, "cannot open the database"),
]

CASE_IDS = [" ".join(args[:2]) for args, *_ in CASES]


def _command_paths(group: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    paths: set[tuple[str, ...]] = set()
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group of sub-commands: `data`, `label`
            paths |= _command_paths(command, (*prefix, name))
        else:
            paths.add((*prefix, name))
    return paths


def test_every_command_is_in_the_table():
    commands = _command_paths(typer.main.get_command(app))
    assert commands == {tuple(a[: len(c)]) for a, *_ in CASES for c in commands if a[0] == c[0]}


@pytest.mark.parametrize(("args", "code", "message"), CASES, ids=CASE_IDS)
def test_a_bad_argument_gets_one_line_and_its_exit_code(
    tmp_path: Path, args: list[str], code: ExitCode, message: str
):
    result = runner.invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == code, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert message.format(tmp=tmp_path) in result.output + "\n"
    usage = "Usage:" in result.output  # Click's own usage errors: exit 2 with the usage
    assert usage or ends_with_one_error_line(result.stderr), result.stderr


def ends_with_one_error_line(stderr: str) -> bool:
    """One `error:` line, last; the daemon, whose every stderr line is JSON, logs it as one
    JSON record at level ERROR instead."""
    lines = stderr.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    if errors:
        return errors == lines[-1:]
    try:
        record = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        return False
    return record.get("level") == "ERROR" and bool(record.get("error"))


def test_predict_names_no_shipped_model_only_when_no_weights_were_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    named = runner.invoke(app, ["predict", IMAGE, "--weights", str(tmp_path / "missing.pt")])
    assert named.exit_code == BAD and "no model is shipped" not in named.output
    monkeypatch.setenv("SPRAYCV_WEIGHTS", str(tmp_path / "default.safetensors"))
    default = runner.invoke(app, ["predict", IMAGE])
    assert default.exit_code == BAD and "no model is shipped yet" in default.output


def test_export_errors_do_not_print_the_format_table(tmp_path: Path):
    listed = runner.invoke(app, ["export", "--list"])
    assert listed.exit_code == OK
    table_line = listed.output.splitlines()[0]
    for args in (["export"], ["export", "--weights", str(tmp_path / "no.safetensors")]):
        result = runner.invoke(app, args)
        assert result.exit_code == BAD
        assert table_line not in result.output and len(result.output.splitlines()) == 1


class _Positive(BaseModel):
    n: int


def _command(raise_: BaseException | None) -> typer.Typer:
    cli = typer.Typer()

    @cli.command()
    @exits((LookupError, FAILED), (ValueError, BAD))
    def run(name: str = typer.Option("x")) -> None:
        if raise_ is not None:
            raise raise_
        typer.echo(f"hello {name}")

    return cli


@pytest.mark.parametrize(
    ("raised", "code", "line"),
    [
        (None, OK, None),
        (bad_request("no way"), BAD, "error: no way"),
        (inputs_failed("2 of 3 inputs could not be measured"), FAILED, "error: 2 of 3 inputs"),
        (KeyError("k"), FAILED, "error: 'k'"),  # mapped: LookupError
        (ValueError("two\n  lines"), BAD, "error: two lines"),  # always one line
    ],
)
def test_exits_maps_errors_to_codes(raised: BaseException | None, code: ExitCode, line: str | None):
    result = runner.invoke(_command(raised), ["--name", "y"])
    assert result.exit_code == code
    if line is None:
        assert result.stdout == "hello y\n"
    else:
        assert result.stderr.splitlines() == [result.stderr.strip()]
        assert result.stderr.startswith(line)


def test_exits_lets_unmapped_errors_through_and_keeps_the_signature():
    result = runner.invoke(_command(RuntimeError("a bug")), [])
    assert isinstance(result.exception, RuntimeError)  # a bug keeps its traceback
    assert "--name" in runner.invoke(_command(None), ["--help"]).output


def test_one_line_joins_pydantic_errors():
    with pytest.raises(ValueError) as info:
        _Positive(n="many")  # type: ignore[arg-type]
    assert one_line(info.value) == (
        "n: Input should be a valid integer, unable to parse string as an integer"
    )
