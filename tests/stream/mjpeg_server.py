"""A real multipart-JPEG HTTP server whose frames a test chooses (good, corrupt, resized)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BOUNDARY = "spraycvframe"


class MjpegServer:
    """Serves `frames(i) -> JPEG bytes` at `fps` to each client on 127.0.0.1.

    `restart(frames)` drops every client and serves new frames on the same socket, as a
    camera that reboots at another resolution: no port is closed and bound again."""

    def __init__(self, frames: Callable[[int], bytes], fps: float = 10.0, port: int = 0):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", f"multipart/x-mixed-replace;boundary={BOUNDARY}")
                self.end_headers()
                i, generation, source = 0, server.generation, server.frames
                try:
                    while not server.closed.is_set() and generation == server.generation:
                        body = source(i)
                        self.wfile.write(
                            f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                            f"Content-Length: {len(body)}\r\n\r\n".encode()
                        )
                        self.wfile.write(body + b"\r\n")
                        server.sent += 1
                        i += 1
                        time.sleep(1.0 / fps)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.closed = threading.Event()
        self.frames, self.generation = frames, 0
        self.sent = 0
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/stream.mjpg"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def restart(self, frames: Callable[[int], bytes]) -> None:
        """End every client's stream (each handler returns after its current frame) and
        serve `frames` to the clients that connect from now on."""
        self.frames = frames
        self.generation += 1

    def close(self) -> None:
        self.closed.set()
        self._httpd.shutdown()
        self._httpd.server_close()
