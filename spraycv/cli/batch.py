"""A run over many inputs (`measure`, `predict`): one bad input never stops the others.

Each input that fails gets one `error: <input>: <why>` line on stderr; the run goes on and
exits 1 at the end (ExitCode.INPUTS_FAILED). Sources that name nothing at all (an empty
folder, a pattern that matches no file) make the run a bad request (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from spraycv.cli.errors import bad_request, inputs_failed, one_line
from spraycv.io.images import ENV_MAX_PIXELS, IMAGE_SUFFIXES, MAX_IMAGE_PIXELS, source_files
from spraycv.io.video import VIDEO_SUFFIXES, is_url


def _stderr(line: str) -> None:
    typer.echo(line, err=True)


def max_pixels_option() -> Any:
    """The `--max-pixels` option, the same for every command that decodes images."""
    return typer.Option(
        MAX_IMAGE_PIXELS,
        "--max-pixels",
        min=1,
        envvar=ENV_MAX_PIXELS,
        help="Largest image or video frame decoded (width x height), checked from the file's "
        "header first; larger ones are refused as failed inputs. Memory grows by about 10 "
        "bytes per pixel.",
    )


@dataclass
class Batch:
    """Counts the inputs of a run and reports each failure on one line."""

    verb: str  # "measured": the summary reads "2 of 5 inputs could not be measured"
    echo: Callable[[str], None] = _stderr  # `predict` writes through its progress bar
    inputs: int = 0
    failed: int = 0

    def fail(self, message: str) -> None:
        """One failed input; the message names it."""
        self.failed += 1
        self.echo(f"error: {message}")

    def warn(self, message: str) -> None:
        self.echo(f"warning: {message}")

    @contextmanager
    def item(self, name: str) -> Iterator[None]:
        """Count one input. An unexpected error fails this input, never the whole run."""
        self.inputs += 1
        try:
            yield
        except Exception as exc:  # e.g. a native library's error on a file no test foresaw
            self.fail(f"{name}: unexpected {type(exc).__name__}: {one_line(exc)}")

    def finish(self) -> None:
        """Exit 1 (after the summary line) if any input failed."""
        if self.failed:
            raise inputs_failed(f"{self.failed} of {self.inputs} inputs could not be {self.verb}")


def _why_empty(source: str, reads_streams: bool) -> str | None:
    """Why a source names no input, or None when it names some."""
    if is_url(source):
        return (
            None
            if reads_streams
            else (
                f"{source}: `spraycv measure` reads image and mask files; "
                "`spraycv predict` reads streams and URLs"
            )
        )
    if not reads_streams and Path(source).suffix.lower() in VIDEO_SUFFIXES:
        return (  # a video file: it would otherwise fail as "not a readable image"
            f"{source}: `spraycv measure` reads image and mask files; "
            "`spraycv predict` reads videos, frame by frame"
        )
    if source_files(source):
        return None
    if Path(source).is_dir():
        return f"{source}: the folder holds no image files ({', '.join(IMAGE_SUFFIXES)})"
    return f"{source}: the pattern matches no file"


def plan_inputs(sources: Sequence[str], batch: Batch, reads_streams: bool) -> list[str]:
    """Every input the sources name, in order: files, folders' images, patterns' matches, and
    with `reads_streams` URLs and camera indexes as they are.

    A source that names nothing is a failed input; when no source names any, the whole run
    is a bad request (exit 2) and nothing is loaded.
    """
    inputs: list[str] = []
    unusable: list[str] = []
    for source in sources:
        why = _why_empty(source, reads_streams)
        if why is not None:
            unusable.append(why)
        elif is_url(source) or (reads_streams and source.isdigit()):
            inputs.append(source)  # as given: a Path would fold the "//" of a URL
        else:
            inputs += [str(path) for path in source_files(source)]
    if not inputs:
        raise bad_request("nothing to measure: " + "; ".join(unusable))
    for why in unusable:
        batch.inputs += 1
        batch.fail(why)
    return inputs
