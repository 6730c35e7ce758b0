"""`ralph serve`'s server: uvicorn on a socket of 127.0.0.1's (never another address), a fresh random token, and
one printed line with the URL that holds it. The token is written nowhere else.
"""

from __future__ import annotations

import secrets
import socket
from typing import TextIO

import uvicorn

from ralphloop.core.errors import RalphError
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


def serve(features: Features, sock: socket.socket, out: TextIO) -> None:
    """Serve until stopped (Ctrl+C, SIGTERM: uvicorn stops, then raises the signal again for the caller)."""
    token = secrets.token_urlsafe(32)
    port = sock.getsockname()[1]
    # the event streams see should_exit and end, so that a stop never waits on an open page
    origins = (f"http://{HOST}:{port}", f"http://localhost:{port}")  # the page's own: a control from another is refused
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
    out.write(f"ralph serve: http://{HOST}:{port}/?token={token}  (Ctrl+C stops it)\n")
    out.flush()
    server.run(sockets=[sock])
