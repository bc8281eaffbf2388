"""Structured logs: one JSON object per line on stderr, with the `extra=` fields of each call.

In the daemon every stderr line is JSON: spraycv's records, other libraries' (waitress),
Python warnings, and no native text: OpenCV and FFmpeg print straight to stderr from C++,
so their logging is silenced (the readers log why a source fails, as JSON).
"""

from __future__ import annotations

import json
import logging
import sys
import time

from spraycv.redact import redact_credentials

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        out.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        # the last stop before a log line leaves the process: no URL password gets past it
        return redact_credentials(json.dumps(out, default=str))


class CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record is emitted, not when it was set up: a
    command run in-process (Typer's CliRunner, a notebook) swaps sys.stderr and closes it."""

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # StreamHandler.__init__ assigns it: nothing to keep
        pass


def setup_json_logging(level: str = "INFO") -> None:
    """Every log record of the process to stderr as JSON (replacing earlier handlers):
    spraycv's from `level`, other libraries' and Python warnings from WARNING."""
    handler = CurrentStderrHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    spraycv = logging.getLogger("spraycv")
    for old in list(spraycv.handlers):
        spraycv.removeHandler(old)
    spraycv.setLevel(level)
    spraycv.propagate = True
    logging.captureWarnings(True)  # warnings.warn -> the "py.warnings" logger -> JSON
    # waitress warns on every request that waits for a worker; the API's 503s tell the load
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
