"""Issue 12's acceptance: hundreds of bad and odd inputs, fed to `spraycv measure`,
`spraycv predict` (beside good files, with the shipped model as it measures by default: its
ONNX export) and the dashboard's Analyse upload path, each a real process over the batch.

Rules: no traceback; each bad input named in a one-line error; good files still measured;
the documented exit code; the process's peak memory under 1.5 GB (an image at the pixel
limit is part of every batch).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import pytest
from fuzz_corpus import Case, build, sources_for, spray_picture

from spraycv.cli.errors import ExitCode
from spraycv.io.images import ENV_MAX_PIXELS, MAX_IMAGE_PIXELS
from spraycv.paths import ENV_WEIGHTS

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "data" / "samples"
SEED = 20261130
MEMORY_LIMIT_BYTES = 1.5e9
LIMIT_SIZE = (5472, 3648)  # width, height: a spray photo just under the pixel limit
CLI = [sys.executable, "-m", "spraycv"]


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    peak_bytes: int
    seconds: float


# Linux keeps a process's peak RSS across exec, and a child made by fork or vfork starts
# from its parent's: a process started from pytest (which has loaded models) would report
# pytest's size. So a small launcher starts the measured process and reports its peak.
LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
child.returncode = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as peak:
    peak.write(str(usage.ru_maxrss * 1024))
sys.exit(child.returncode)
"""


def run_measuring_memory(args: list[str], cwd: Path, timeout_s: float = 300) -> Run:
    """Run a process to its end, with its own peak RSS (bytes)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])  # this tree
    env["OMP_NUM_THREADS"] = "1"  # one thread: far faster on 2 cores shared with other work
    env.pop(ENV_MAX_PIXELS, None)  # the default limit, which the memory bound is about
    env.pop(ENV_WEIGHTS, None)  # the model that measures by default: the shipped export
    peak = cwd / "peak_rss"
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(peak), *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout_s,
    )  # fmt: skip
    seconds = time.monotonic() - start
    return Run(done.returncode, done.stdout, done.stderr, int(peak.read_text()), seconds)


@pytest.fixture(scope="module")
def refused_port() -> Iterator[int]:
    """A port bound but never listening: connections to it are refused, and while the socket
    is held no other process can take the port (no bind-close-reuse race)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory, refused_port: int
) -> tuple[list[Case], list[Case]]:
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg makes the video inputs (scripts/apt-packages.txt)")
    assert LIMIT_SIZE[0] * LIMIT_SIZE[1] <= MAX_IMAGE_PIXELS

    def limit_picture() -> bytes:
        return cv2.imencode(".jpg", spray_picture(LIMIT_SIZE, SAMPLES))[1].tobytes()

    root = tmp_path_factory.mktemp("fuzz")
    return build(root, SAMPLES, SEED, refused_port, limit_picture)


def _named(lines: list[str], level: str, key: str) -> bool:
    return any(line.startswith(f"{level}: {key}: ") for line in lines)


def _mismatches(consumer: str, cases: list[Case], lines: list[str], key) -> list[str]:
    """Every case whose lines do not match its expectation, as readable text."""
    wrong = []
    for case in cases:
        expected = case.expect[consumer]
        if expected == "skip":
            continue
        error, warning = _named(lines, "error", key(case)), _named(lines, "warning", key(case))
        outcome = {
            "error": error,
            "warn": warning and not error,
            "flagged": error or warning,
            "ok": not error and not warning,
        }[expected]
        if not outcome:
            wrong.append(f"{case.category} {key(case)}: expected {expected}")
    return wrong


def _check_cli_lines(run: Run, consumer: str, cases: list[Case], good: list[Case]) -> None:
    lines = run.stderr.splitlines()
    assert "Traceback" not in run.stderr
    stray = [line for line in lines if not line.startswith(("error: ", "warning: "))]
    assert not stray, stray[:10]  # every line one of ours: native decoders' noise quieted
    assert not _mismatches(consumer, cases + good, lines, lambda c: c.source)
    failed = sum(c.expect[consumer] == "error" for c in cases)
    total = len([c for c in cases if c.expect[consumer] != "skip"]) + len(good)
    assert lines[-1] == f"error: {failed} of {total} inputs could not be measured"
    assert run.code == ExitCode.INPUTS_FAILED
    assert run.peak_bytes < MEMORY_LIMIT_BYTES, run.peak_bytes


def _report(name: str, run: Run, inputs: int) -> None:
    print(
        f"\n{name}: {inputs} inputs, exit {run.code}, {run.seconds:.1f} s, "
        f"peak RSS {run.peak_bytes / 2**20:.0f} MiB"
    )


def test_the_corpus_is_large_and_varied(corpus: tuple[list[Case], list[Case]]):
    cases, good = corpus
    assert len(cases) >= 300
    categories = {c.category for c in cases}
    for needed in (
        "truncated",
        "empty",
        "noise",
        "tiny",
        "rgb16",
        "rgba",
        "mode_P",
        "huge20k",
        "mask_levels",
        "video_cut",
        "video_empty",
        "audio_only",
        "url",
    ):
        assert needed in categories
    print(f"\nfuzz corpus: {len(cases)} bad or odd inputs, {len(good)} good, seed {SEED}")


def test_measure_survives_every_input(corpus: tuple[list[Case], list[Case]], tmp_path: Path):
    cases, good = corpus
    sources = [*sources_for("measure", cases), *(c.source for c in good)]
    run = run_measuring_memory([*CLI, "measure", "--json", *sources], tmp_path)
    _report("measure", run, len(sources))
    _check_cli_lines(run, "measure", cases, good)
    measured = {json.loads(line)["source"] for line in run.stdout.splitlines()}
    assert {c.source for c in good} <= measured  # every good file still measured


def test_predict_survives_every_input_beside_good_files(
    corpus: tuple[list[Case], list[Case]], tmp_path: Path
):
    cases, good = corpus
    sources = [*sources_for("predict", cases), *(c.source for c in good)]
    out = tmp_path / "out"
    args = [*CLI, "predict", *sources, "--out", str(out), "--quiet"]  # the shipped model
    run = run_measuring_memory(args, tmp_path)
    _report("predict", run, len(sources))
    _check_cli_lines(run, "predict", cases, good)
    rows = [json.loads(line) for line in (out / "measurements.jsonl").read_text().splitlines()]
    sources_measured = {row["source"] for row in rows}
    assert {c.source for c in good} <= sources_measured
    video = next(c.source for c in cases if c.category == "video_good")
    assert video in sources_measured and (out / f"{Path(video).stem}_overlay.mp4").is_file()
    overlays = {p.name for p in (out / "overlays").iterdir()}
    assert {f"{Path(c.source).stem}_overlay.png" for c in good} <= overlays


def test_dashboard_analyse_survives_every_upload(
    corpus: tuple[list[Case], list[Case]], tmp_path: Path
):
    cases, good = corpus
    sources = [*sources_for("dashboard", cases), *(c.source for c in good)]
    script = str(Path(__file__).with_name("fuzz_analyse.py"))
    run = run_measuring_memory([sys.executable, script, *sources], tmp_path)
    _report("dashboard Analyse", run, len(sources))
    assert run.code == 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert not _mismatches("dashboard", cases + good, lines, lambda c: c.name)
    cones = dict(line.split()[1:] for line in lines if line.startswith("measured: "))
    assert all(int(cones[c.name]) >= 1 for c in good), cones  # every good photo measured
    assert run.peak_bytes < MEMORY_LIMIT_BYTES, run.peak_bytes
