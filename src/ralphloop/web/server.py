"""`ralph serve`'s server: uvicorn on a socket of 127.0.0.1's (never another address), a fresh random token, and
one printed line with the URL that holds it. The token is written nowhere else.
"""

from __future__ import annotations

import secrets
import socket
from typing import TextIO
from urllib.parse import urlsplit

import uvicorn

from ralphloop.core.errors import RalphError
from ralphloop.project.page import publish, withdraw
from ralphloop.web.app import make_app
from ralphloop.web.live import Source
from ralphloop.web.snapshot import Features

HOST = "127.0.0.1"  # loopback only: the page shows what agents wrote and what they cost


def listen(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: a free port); a one-line error when it cannot be had."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
        sock.listen(128)  # before the URL is printed: a browser that comes at once waits in the backlog
    except OSError as exc:
        sock.close()
        raise RalphError(f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror or exc})") from None
    return sock


def serve(features: Features, sock: socket.socket, out: TextIO, public_url: str | None = None) -> None:
    """Serve until stopped (Ctrl+C, SIGTERM: uvicorn stops, then raises the signal again for the caller). With
    `public_url` (`serve.public_url`: the user's own tunnel to this port), the page is also that address's: its
    controls are taken from there, and the notifications that need the user carry it (project/page.py)."""
    token = secrets.token_urlsafe(32)
    port = sock.getsockname()[1]
    # the page's own origins: a control from any other is refused
    origins = (f"http://{HOST}:{port}", f"http://localhost:{port}", *([origin_of(public_url)] if public_url else []))
    # the event streams see should_exit and end, so that a stop never waits on an open page
    app = make_app(Source(features), token, f"ralph_serve_{port}", lambda: server.should_exit, origins)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        http="h11",
        ws="none",
        loop="asyncio",
        timeout_graceful_shutdown=3,
    )
    server = uvicorn.Server(config)
    if public_url:  # before the line that says it listens: whoever reads that finds the address published
        publish(features.root, f"{public_url}/?token={token}")
    out.write(f"ralph serve: http://{HOST}:{port}/?token={token}  (Ctrl+C stops it)\n")
    if public_url:
        out.write(f"ralph serve: also {public_url}/ (serve.public_url), in the notifications that need you\n")
    out.flush()
    try:
        server.run(sockets=[sock])
    finally:
        if public_url:
            withdraw(features.root)


def origin_of(url: str) -> str:
    """scheme://host[:port] of an address: what a browser sends as Origin from a page there."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def public_address(value: object) -> str | None:
    """`serve.public_url` checked: an http(s) address with a host and no query; None when not set. A ValueError
    says what is wrong."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected an address such as https://ralph.example.net")
    text = value.strip().rstrip("/")
    try:
        parts = urlsplit(text)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(f"{value!r} is not an http(s) address with a host (https://ralph.example.net)")
    return text
