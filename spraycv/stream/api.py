"""The daemon's HTTP API (JSON, Prometheus text and JPEG), on the standard library's server.

GET /health                 liveness and source states
GET /metrics                Prometheus metrics
GET /sources                every source's state and counters
GET /latest[?source=S]      the newest measured frame per source, with its nozzles
GET /frame/S.jpg            the newest annotated frame of source S
GET /measurements?since=T[&until=U&source=S&limit=N]   stored nozzle measurements
GET /events?since=T[&until=U&source=S&limit=N]         stored events
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

from spraycv.config.daemon import ApiConfig
from spraycv.stream.store import StoreError, StoreReader

log = logging.getLogger("spraycv.stream.api")


class DaemonView(Protocol):
    """What the API reads from a running daemon."""

    store: StoreReader

    def health(self) -> dict[str, Any]: ...
    def sources_status(self) -> list[dict[str, Any]]: ...
    def latest(self, source: str | None = None) -> dict[str, Any]: ...
    def latest_jpeg(self, source: str) -> bytes | None: ...
    def metrics_text(self) -> str: ...


class ApiError(Exception):
    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _query_float(query: dict[str, list[str]], key: str, default: float | None) -> float | None:
    if key not in query:
        return default
    try:
        return float(query[key][0])
    except ValueError:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"{key} must be a number (unix time)") from None


def _query_limit(query: dict[str, list[str]]) -> int:
    value = _query_float(query, "limit", 10_000)
    if value is None or not 1 <= value <= 100_000:
        raise ApiError(HTTPStatus.BAD_REQUEST, "limit must be between 1 and 100000")
    return int(value)


def make_handler(view: DaemonView, config: ApiConfig) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one daemon (no module-level state)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "spraycv"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug(format % args)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            query = parse_qs(url.query)
            try:
                self._authorise()
                self._route(url.path.rstrip("/") or "/", query)
            except ApiError as exc:
                self._json({"error": exc.message}, exc.status)
            except StoreError as exc:
                self._json({"error": str(exc)}, HTTPStatus.SERVICE_UNAVAILABLE)
            except BrokenPipeError:
                pass  # the client went away
            except Exception as exc:
                log.exception("API request failed", extra={"path": self.path})
                self._json({"error": f"internal error: {exc}"}, HTTPStatus.INTERNAL_SERVER_ERROR)

        def _authorise(self) -> None:
            if not config.token:
                return
            sent = self.headers.get("Authorization", "")
            if not hmac.compare_digest(sent.encode(), f"Bearer {config.token}".encode()):
                raise ApiError(HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token")

        def _route(self, path: str, query: dict[str, list[str]]) -> None:
            source = query.get("source", [None])[0]
            if path == "/health":
                self._json(view.health())
            elif path == "/metrics":
                self._send(view.metrics_text().encode(), "text/plain; version=0.0.4")
            elif path == "/sources":
                self._json(view.sources_status())
            elif path == "/latest":
                self._json(view.latest(source))
            elif path.startswith("/frame/") and path.endswith(".jpg"):
                jpeg = view.latest_jpeg(path[len("/frame/") : -len(".jpg")])
                if jpeg is None:
                    raise ApiError(HTTPStatus.NOT_FOUND, "no frame measured yet for this source")
                self._send(jpeg, "image/jpeg")
            elif path in ("/measurements", "/events"):
                since = _query_float(query, "since", 0.0)
                until = _query_float(query, "until", None)
                read = view.store.measurements if path == "/measurements" else view.store.events
                self._json(read(since or 0.0, until, source, _query_limit(query)))
            else:
                raise ApiError(HTTPStatus.NOT_FOUND, f"no such endpoint: {path}")

        def _json(self, body: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
            self._send(json.dumps(body, allow_nan=False).encode(), "application/json", status)

        def _send(self, body: bytes, kind: str, status: HTTPStatus = HTTPStatus.OK) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler


class ApiServer:
    """The HTTP server on its own thread; `port` is the bound one (config port 0: any free)."""

    def __init__(self, view: DaemonView, config: ApiConfig):
        try:
            self._server = ThreadingHTTPServer(
                (config.host, config.port), make_handler(view, config)
            )
        except OSError as exc:
            raise OSError(f"API cannot listen on {config.host}:{config.port}: {exc}") from None
        self._server.daemon_threads = True
        self.host, self.port = config.host, self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="api", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
