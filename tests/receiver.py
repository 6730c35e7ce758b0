"""A loopback receiver for notifications: a plain webhook's POST and an ntfy server's publish (apprise's `ntfy://`
posts `{"topic", "title", "message"}` as JSON to the server's root). Each request is kept, and, when `record`
is set, appended to that file as one JSON line (a test agent can wait for it while the run goes on)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

# A loopback request must not go through a proxy the environment may name.
NO_PROXY = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        self.server.keep({"path": self.path, "headers": dict(self.headers.items()), "body": body})
        if self.server.hold is not None:
            self.server.hold.wait(60)  # a service that does not answer (until the test lets it)
        self.send_response(self.server.status)
        for name, value in self.server.extra_headers.items():
            self.send_header(name, value)
        answer = b'{"id":"x1","event":"message"}' if self.server.status == 200 else b""
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Receiver(HTTPServer):
    """Records every request it gets, on 127.0.0.1 and a port of its own."""

    def __init__(self, record: Path | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.extra_headers: dict[str, str] = {}
        self.record = record
        self.hold: threading.Event | None = None
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        port: int = self.server_address[1]
        return port

    @property
    def url(self) -> str:
        """The plain webhook's URL."""
        return f"http://127.0.0.1:{self.port}/hook"

    def ntfy(self, topic: str) -> str:
        """apprise's URL for this receiver as a self-hosted ntfy server over plain http."""
        return f"ntfy://127.0.0.1:{self.port}/{topic}"

    def keep(self, request: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(request)
            if self.record is not None:
                with self.record.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps({"path": request["path"]}) + "\n")

    def bodies(self, path: str | None = None) -> list[dict[str, Any]]:
        """The JSON bodies received (at `path` only, when given), in order."""
        return [json.loads(item["body"]) for item in self.requests if path is None or item["path"] == path]

    def webhook(self) -> list[dict[str, Any]]:
        return self.bodies("/hook")

    def published(self) -> list[dict[str, Any]]:
        """What was published to ntfy (apprise posts to the server's root)."""
        return self.bodies("/")


@contextmanager
def receiving(record: Path | None = None) -> Iterator[Receiver]:
    server = Receiver(record)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
