"""The daemon's HTTP API (JSON, Prometheus text and JPEG), served by waitress.

GET /health                 ok / degraded / failed and source states (503 when failed)
GET /metrics                Prometheus metrics
GET /sources                every source's state and counters (URLs without passwords)
GET /latest[?source=S]      the newest measured frame per source, with its nozzles (and the
                            spread of each nozzle's recent readings: stream.tracking.Spread)
GET /frame/S.jpg            the newest annotated frame of source S
GET /measurements?since=T[&until=U&source=S&limit=N]   stored nozzle measurements
GET /events?since=T[&until=U&source=S&limit=N]         stored events

Why waitress (and not the standard library's ThreadingHTTPServer, one thread per
connection with no timeout): it is pure Python with no dependencies, maintained by the
Pylons project, and built for exactly these limits: one async loop holds every socket
(an idle one costs a file descriptor, not a thread), a fixed pool of worker threads runs
the requests, and it closes idle connections (channel_timeout) and stops accepting at
connection_limit. On top of it this module refuses a client's connections beyond
api.max_connections_per_client, answers 503 at once when more than api.max_waiting
requests wait for a worker, caps the rows of a response (api.max_rows), and the store's
read-only queries are interrupted after api.request_timeout_s.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import math
import resource
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Protocol
from urllib.parse import parse_qs

from waitress.channel import HTTPChannel
from waitress.server import create_server
from waitress.wasyncore import close_all

from spraycv.config.daemon import ApiConfig
from spraycv.geometry.types import ValueEnum
from spraycv.redact import redact_credentials
from spraycv.stream.store import StoreError, StoreReader

log = logging.getLogger("spraycv.stream.api")

READ_METHODS = ("GET", "HEAD")  # the API only reads; waitress sends no body for HEAD
ROW_CAP_HEADER = "X-Row-Cap"  # on /measurements and /events: the most rows one response holds
NEVER_SHED = frozenset({"/health"})  # a monitor sees the daemon's state even under load
FILES_KEPT_FOR_THE_DAEMON = 256  # model, database, cameras, logs: not for API sockets
Query = dict[str, list[str]]


class HealthStatus(ValueEnum):
    """What /health reports: every source streaming, some, or none (or a dead pipeline)."""

    OK = "ok"
    DEGRADED = "degraded"
    FAILED = "failed"

    @property
    def http_status(self) -> HTTPStatus:
        """503 when nothing is measured, so that a plain HTTP check sees it."""
        return HTTPStatus.SERVICE_UNAVAILABLE if self is HealthStatus.FAILED else HTTPStatus.OK


class DaemonView(Protocol):
    """What the API reads from a running daemon."""

    store: StoreReader

    def health(self) -> dict[str, Any]: ...
    def sources_status(self) -> list[dict[str, Any]]: ...
    def latest(self, source: str | None = None) -> dict[str, Any]: ...
    def latest_jpeg(self, source: str) -> bytes | None: ...
    def metrics_text(self) -> str: ...


Headers = tuple[tuple[str, str], ...]


class ApiError(Exception):
    def __init__(self, status: HTTPStatus, message: str, headers: Headers = ()):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


@dataclass(frozen=True)
class Reply:
    status: HTTPStatus
    body: bytes
    content_type: str = "application/json"
    headers: Headers = ()


def json_reply(body: Any, status: HTTPStatus = HTTPStatus.OK, headers: Headers = ()) -> Reply:
    """Every JSON answer goes through here, so no response can show a URL's password."""
    text = redact_credentials(json.dumps(body, allow_nan=False))
    return Reply(status, text.encode(), "application/json", headers)


def _query_number(query: Query, key: str, default: float | None) -> float | None:
    if key not in query:
        return default
    raw = query[key][0]
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):  # nan and inf compare false with everything: refuse them
        raise ApiError(HTTPStatus.BAD_REQUEST, f"{key} must be a finite number, got {raw[:40]!r}")
    return value


def _query_limit(query: Query, cap: int) -> int:
    """limit=N, at most `cap` (the client pages on from the last row's time)."""
    given = _query_number(query, "limit", None)
    value = cap if given is None else given
    if value < 1:
        raise ApiError(HTTPStatus.BAD_REQUEST, "limit must be at least 1")
    return min(int(value), cap)


class ApiApp:
    """The WSGI application: read-only routes onto one daemon (no module-level state)."""

    def __init__(self, view: DaemonView, config: ApiConfig, waiting: Callable[[], int]):
        self.view, self.config, self.waiting = view, config, waiting
        self.shed = 0  # requests answered 503 because too many waited
        self._shed_lock = threading.Lock()  # worker threads count them
        self.routes: dict[str, Callable[[Query], Reply]] = {
            "/health": self._health,
            "/metrics": self._metrics,
            "/sources": lambda _query: json_reply(self.view.sources_status()),
            "/latest": lambda query: json_reply(self.view.latest(query.get("source", [None])[0])),
            "/measurements": lambda query: self._rows(query, self.view.store.measurements),
            "/events": lambda query: self._rows(query, self.view.store.events),
        }

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        reply = self.handle(environ)
        headers = [
            ("Content-Type", reply.content_type),
            ("Content-Length", str(len(reply.body))),
            ("Cache-Control", "no-store"),
            *reply.headers,
        ]
        start_response(f"{reply.status.value} {reply.status.phrase}", headers)
        return [reply.body]

    def handle(self, environ: dict[str, Any]) -> Reply:
        path = environ.get("PATH_INFO", "/").rstrip("/") or "/"
        try:
            self._admit(environ, path)
            return self._route(path, parse_qs(environ.get("QUERY_STRING", "")))
        except ApiError as exc:
            return json_reply({"error": exc.message}, exc.status, exc.headers)
        except StoreError as exc:
            return json_reply({"error": str(exc)}, HTTPStatus.SERVICE_UNAVAILABLE)
        except Exception as exc:
            log.exception("API request failed", extra={"path": path})
            return json_reply({"error": f"internal error: {exc}"}, HTTPStatus.INTERNAL_SERVER_ERROR)

    def _admit(self, environ: dict[str, Any], path: str) -> None:
        """The method, the token and the load, checked before any work is done."""
        method = environ.get("REQUEST_METHOD", "")
        if method not in READ_METHODS:
            allow = (("Allow", ", ".join(READ_METHODS)),)
            message = f"method {method[:20]} not allowed: the API only reads (GET)"
            raise ApiError(HTTPStatus.METHOD_NOT_ALLOWED, message, allow)
        if self.config.token:
            sent = environ.get("HTTP_AUTHORIZATION", "")
            if not hmac.compare_digest(sent.encode(), f"Bearer {self.config.token}".encode()):
                raise ApiError(HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token")
        waiting = self.waiting()
        if waiting > self.config.max_waiting and path not in NEVER_SHED:
            with self._shed_lock:
                self.shed += 1
            message = f"busy: {waiting} requests are waiting; retry in a moment"
            raise ApiError(HTTPStatus.SERVICE_UNAVAILABLE, message, (("Retry-After", "1"),))

    def _route(self, path: str, query: Query) -> Reply:
        if path.startswith("/frame/") and path.endswith(".jpg"):
            return self._frame(path[len("/frame/") : -len(".jpg")])
        route = self.routes.get(path)
        if route is None:
            raise ApiError(HTTPStatus.NOT_FOUND, f"no such endpoint: {path[:100]}")
        return route(query)

    def _health(self, _query: Query) -> Reply:
        health = self.view.health()
        return json_reply(health, HealthStatus(health["status"]).http_status)

    def _metrics(self, _query: Query) -> Reply:
        return Reply(HTTPStatus.OK, self.view.metrics_text().encode(), "text/plain; version=0.0.4")

    def _frame(self, source: str) -> Reply:
        jpeg = self.view.latest_jpeg(source)
        if jpeg is None:
            raise ApiError(HTTPStatus.NOT_FOUND, "no frame measured yet for this source")
        return Reply(HTTPStatus.OK, jpeg, "image/jpeg")

    def _rows(self, query: Query, read: Callable[..., list[dict[str, Any]]]) -> Reply:
        since = _query_number(query, "since", 0.0)
        until = _query_number(query, "until", None)
        limit = _query_limit(query, self.config.max_rows)
        rows = read(since, until, query.get("source", [None])[0], limit)
        return json_reply(rows, headers=((ROW_CAP_HEADER, str(self.config.max_rows)),))


class PerClientLimit:
    """Stands in for waitress's channel class: a client's connections beyond `limit` are
    answered 503 and closed at once, so that one client cannot take every connection."""

    def __init__(self, limit: int):
        self.limit = limit
        self.refused = 0

    def __call__(
        self, server: Any, conn: socket.socket, addr: Any, adj: Any, map: Any = None
    ) -> HTTPChannel | None:
        client = _host(addr)
        channels = list(server.active_channels.values())  # a copy: workers close channels too
        if sum(_host(c.addr) == client for c in channels) < self.limit:
            return HTTPChannel(server, conn, addr, adj, map=map)
        self.refused += 1
        message = f"too many connections from {client} (api.max_connections_per_client)"
        _refuse(conn, message)
        return None


def _host(addr: Any) -> Any:
    """The client's address of a socket address ((host, port, ...) for TCP)."""
    return addr[0] if isinstance(addr, tuple) else addr


def _refuse(conn: socket.socket, message: str) -> None:
    """A one-shot 503 on a fresh socket, then close (best effort: the client may be gone)."""
    body = json.dumps({"error": message}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nRetry-After: 5\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        conn.send(head.encode() + body)
    conn.close()


def connection_budget(wanted: int) -> int:
    """Raise this process's open-file limit for `wanted` sockets if allowed; returns how
    many connections the limit leaves room for (a few descriptors stay for the daemon)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = wanted + FILES_KEPT_FOR_THE_DAEMON
    ceiling = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        soft = ceiling
    room = wanted if soft == resource.RLIM_INFINITY else soft - FILES_KEPT_FOR_THE_DAEMON
    if room < wanted:
        log.warning(
            "open-file limit lowers api.max_connections",
            extra={"wanted": wanted, "allowed": max(1, room), "limit": soft},
        )
    return max(1, min(wanted, room))


def listening_socket(host: str, port: int) -> socket.socket:
    """One bound socket for host:port (waitress would listen on every address of a name:
    "localhost" is both 127.0.0.1 and ::1, each with its own free port for port 0)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise OSError(f"API cannot listen on {host}:{port}: {exc}") from None


def _server_settings(config: ApiConfig, connection_limit: int) -> dict[str, Any]:
    """waitress's settings for the API's limits (its seconds are whole numbers)."""
    return {
        "threads": config.workers,
        "connection_limit": connection_limit,
        "channel_timeout": config.idle_timeout_s,
        "cleanup_interval": 1,  # how often idle sockets are looked for
        "asyncore_use_poll": True,  # select() stops at 1024 descriptors
        "ident": "spraycv",  # the Server header, with no version to look up
        "max_request_header_size": 16_384,
        "max_request_body_size": 65_536,  # the API takes no bodies: do not buffer any
        "expose_tracebacks": False,
    }


class ApiServer:
    """The HTTP server on its own thread; `port` is the bound one (config port 0: any free).

    The socket is bound here, so a busy port fails the start before anything else runs.
    """

    def __init__(self, view: DaemonView, config: ApiConfig):
        self._map: dict[int, Any] = {}  # waitress's socket map, ours alone
        self.app = ApiApp(view, config, self._waiting)
        self.per_client = PerClientLimit(config.max_connections_per_client)
        sock = listening_socket(config.host, config.port)
        settings = _server_settings(config, connection_budget(config.max_connections))
        self._server = create_server(self.app, map=self._map, sockets=[sock], **settings)
        self._server.channel_class = self.per_client
        self.host, self.port = config.host, int(sock.getsockname()[1])
        self._thread = threading.Thread(target=self._server.run, name="api", daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        return f"http://{host}:{self.port}"

    @property
    def refused(self) -> int:
        """Connections refused by the per-client limit, plus requests shed as busy."""
        return self.per_client.refused + self.app.shed

    def _waiting(self) -> int:
        """Requests that wait for a worker thread (waitress's dispatcher queue)."""
        return len(self._server.task_dispatcher.queue)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Close every socket (on the loop's own thread), then end the worker threads."""
        if self._thread.is_alive():
            self._server.trigger.pull_trigger(lambda: close_all(self._map))
            self._thread.join(5)
        else:
            close_all(self._map)
        self._server.task_dispatcher.shutdown(timeout=5)
