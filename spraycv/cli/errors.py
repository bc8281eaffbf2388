"""The CLI's error contract: every command reports an error as one line on stderr and exits
with one of three documented codes (README, "Exit codes").

A command raises `CommandError` (or an exception its `@exits` table maps to a code); the
decorator prints `error: <message>` and exits. Usage errors found while parsing the
command line are Click's: they exit 2 as well, with the usage.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import IntEnum
from typing import Any, TypeVar

import typer
from pydantic import ValidationError

F = TypeVar("F", bound=Callable[..., Any])
Raised = type[BaseException] | tuple[type[BaseException], ...]


class ExitCode(IntEnum):
    OK = 0
    INPUTS_FAILED = 1  # some inputs could not be processed; the others were
    BAD_REQUEST = 2  # a bad option or config, nothing to process, or it cannot start


class CommandError(Exception):
    """An error a command reports as one line and exits on."""

    def __init__(self, message: str, code: ExitCode):
        super().__init__(message)
        self.code = code


def bad_request(message: str) -> CommandError:
    return CommandError(message, ExitCode.BAD_REQUEST)


def inputs_failed(message: str) -> CommandError:
    return CommandError(message, ExitCode.INPUTS_FAILED)


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (pydantic's field errors joined by '; ')."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return " ".join(str(exc).split()) or type(exc).__name__


def report(message: str) -> None:
    """One error line on stderr."""
    typer.echo(f"error: {message}", err=True)


def exits(*mapping: tuple[Raised, ExitCode]) -> Callable[[F], F]:
    """Decorate a command: CommandError, and the exceptions mapped here (the first match
    wins, so list subclasses first), print one error line and exit with their code."""

    def decorate(command: F) -> F:
        @functools.wraps(command)  # Typer reads the options from the wrapped signature
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except (typer.Exit, typer.Abort, typer.TyperException):
                raise  # Typer's own exits and usage errors (BadParameter) keep their contract
            except CommandError as exc:
                report(str(exc))
                raise typer.Exit(int(exc.code)) from None
            except Exception as exc:
                code = next((code for raised, code in mapping if isinstance(exc, raised)), None)
                if code is None:
                    raise
                report(one_line(exc))
                raise typer.Exit(int(code)) from None

        return run  # type: ignore[return-value]

    return decorate
