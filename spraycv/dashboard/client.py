"""HTTP client of the daemon's API (spraycv/stream/api.py), with errors an operator can act on.

The dashboard reads everything through this class, the embedded daemon included, so there
is one code path. Only the standard library: the dashboard needs no extra HTTP package.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from http import HTTPStatus
from typing import Any
from urllib.parse import quote, urlencode, urlparse

from spraycv.redact import redact_credentials
from spraycv.stream.api import ROW_CAP_HEADER


class DaemonError(RuntimeError):
    """The daemon could not answer a request; the message says what to do."""


class DaemonUnreachable(DaemonError):
    """Nothing answers at the daemon URL (not running, wrong host or port, a timeout)."""

    def __init__(self, url: str, reason: str):
        super().__init__(
            f"cannot reach the spraycv daemon at {redact_credentials(url)}: {reason}. Is "
            "`spraycv daemon` running there? Check the URL, or clear it to use the embedded "
            "demo daemon."
        )
        self.url, self.reason = url, reason


class DaemonApiError(DaemonError):
    """The daemon answered with an HTTP error (a wrong token, a bad query, a store problem)."""

    def __init__(self, url: str, status: int, message: str):
        hint = " (set the token: SPRAYCV_DAEMON_TOKEN or the sidebar)" if status == 401 else ""
        shown = redact_credentials(url)
        super().__init__(f"the daemon at {shown} answered HTTP {status}: {message}{hint}")
        self.url, self.status, self.message = url, status, message


@dataclass(frozen=True)
class Snapshot:
    """The newest measured frame of a source and its annotated JPEG (None: none yet)."""

    record: dict[str, Any]
    jpeg: bytes | None
    # False when the daemon moved on between the reads: the picture may be a newer frame
    consistent: bool


def _window_route(name: str, doc: str) -> Callable[..., list[dict[str, Any]]]:
    """The DaemonClient method `name`: the rows of the route /name from `since` to `until`
    (None: now), of one source (None: all), at most `limit` of them, oldest first."""

    def rows(
        self: DaemonClient,
        since: float = 0.0,
        until: float | None = None,
        source: str | None = None,
        limit: int = 10_000,
    ) -> list[dict[str, Any]]:
        return self._window(f"/{name}", since, until, source, limit)

    rows.__name__, rows.__qualname__, rows.__doc__ = name, f"DaemonClient.{name}", doc
    return rows


class DaemonClient:
    """GET requests to one daemon; every method raises DaemonError subclasses only."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 5.0):
        parsed = urlparse(url.strip())
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            shown = redact_credentials(url)
            raise ValueError(f"daemon URL must look like http://HOST:PORT, got {shown!r}")
        self.url = url.strip().rstrip("/")
        self.token = token or None
        self.timeout = timeout

    def __repr__(self) -> str:  # never the token, nor a password in the URL
        return f"DaemonClient({self.shown_url!r})"

    @property
    def shown_url(self) -> str:
        """The URL as shown to the operator (without a password)."""
        return redact_credentials(self.url)

    # -- transport -------------------------------------------------------------------------
    def _get(self, path: str, params: dict[str, Any] | None = None) -> bytes:
        return self._fetch(path, params)[0]

    def _fetch(
        self, path: str, params: dict[str, Any] | None = None, answers: tuple[int, ...] = ()
    ) -> tuple[bytes, Message]:
        """(body, headers); an HTTP error status not in `answers` raises DaemonApiError."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        target = self.url + path + (f"?{urlencode(query)}" if query else "")
        request = urllib.request.Request(target)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read(), response.headers
        except urllib.error.HTTPError as exc:
            if exc.code in answers:
                return exc.read(), exc.headers
            raise DaemonApiError(self.url, exc.code, _error_message(exc)) from None
        except urllib.error.URLError as exc:
            raise DaemonUnreachable(self.url, str(exc.reason)) from None
        except TimeoutError:
            raise DaemonUnreachable(self.url, f"no answer within {self.timeout:g} s") from None
        except (ConnectionError, OSError) as exc:  # reset or refused mid-read
            raise DaemonUnreachable(self.url, str(exc)) from None

    def _json(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._decode(path, self._get(path, params))

    def _decode(self, path: str, body: bytes) -> Any:
        try:
            return json.loads(body)
        except ValueError:
            raise DaemonApiError(self.url, 200, f"{path} did not return JSON") from None

    # -- endpoints (see spraycv/stream/api.py) ---------------------------------------------
    def health(self) -> dict[str, Any]:
        """The daemon's state; "failed" (HTTP 503: nothing streams) is an answer too."""
        body, _ = self._fetch("/health", answers=(HTTPStatus.SERVICE_UNAVAILABLE,))
        return self._decode("/health", body)

    def sources(self) -> list[dict[str, Any]]:
        return self._json("/sources")

    def latest(self, source: str | None = None) -> dict[str, dict[str, Any]]:
        return self._json("/latest", {"source": source})

    def frame_jpeg(self, source: str) -> bytes | None:
        """The newest annotated frame of a source; None before its first measured frame."""
        try:
            return self._get(f"/frame/{quote(source, safe='')}.jpg")
        except DaemonApiError as exc:
            if exc.status == 404:
                return None
            raise

    # the rows of a time window, read page by page (_window); the same options as StoreReader's
    measurements = _window_route("measurements", "Nozzle measurements, oldest first.")
    events = _window_route("events", "Events (alarms, sources lost and back), oldest first.")

    def _window(
        self, path: str, since: float, until: float | None, source: str | None, limit: int
    ) -> list[dict[str, Any]]:
        """Up to `limit` rows of `path` from `since` to `until` (None: now), oldest first.

        The daemon caps the rows of one response (api.max_rows, sent as X-Row-Cap): a full
        page goes on from its last row's time, skipping the rows already held at that time.
        """
        rows: list[dict[str, Any]] = []
        while True:  # at least one request: the daemon judges the query
            held = {r["id"] for r in rows if r["time"] == since}  # the next page repeats them
            asked = limit - len(rows) + len(held)
            params = {"since": since, "until": until, "source": source, "limit": asked}
            body, headers = self._fetch(path, params)
            page = self._decode(path, body)
            fresh = [r for r in page if r["id"] not in held]
            rows.extend(fresh)
            cap = int(headers.get(ROW_CAP_HEADER) or asked)
            if len(rows) >= limit or len(page) < min(asked, cap):
                break  # enough, or the window's end
            if not fresh:
                message = f"{path}: more rows share one time than one page holds"
                raise DaemonApiError(self.url, 200, message)
            since = page[-1]["time"]
        return rows[:limit]

    def snapshot(self, source: str, tries: int = 3) -> Snapshot | None:
        """The latest record of a source with the JPEG of that same frame.

        /latest and /frame are two requests; the daemon may measure a new frame between
        them. Reading /latest again after the picture tells whether it did: same frame
        number before and after means the picture belongs to the numbers (frames only move
        forward). Retried a few times, then returned marked inconsistent.
        """
        record: dict[str, Any] | None = None
        jpeg: bytes | None = None
        for _ in range(max(1, tries)):
            record = self.latest(source).get(source)
            if record is None:
                return None
            jpeg = self.frame_jpeg(source)
            after = self.latest(source).get(source)
            if after is not None and _frame_key(after) == _frame_key(record):
                return Snapshot(record, jpeg, True)
        assert record is not None
        return Snapshot(record, jpeg, False)


def _frame_key(record: dict[str, Any]) -> tuple[int, float]:
    """Frame number and capture time: a restarted reader reuses numbers, never both."""
    return record["frame_no"], record["time"]


def _error_message(exc: urllib.error.HTTPError) -> str:
    """The API's {"error": ...} body, else the HTTP reason."""
    try:
        return str(json.loads(exc.read())["error"])
    except (ValueError, KeyError, TypeError, OSError):
        return str(exc.reason)
