"""ralph's filtering HTTP(S) proxy (issue 35, `sandbox.network: allow`): it runs in ralph, outside the sandbox, and
accepts on a socket that listens inside the boxes' network (processes/box_network.py), the agents' only way out. It lets
through `CONNECT host:port` (HTTPS, any TLS: it never looks inside) and plain HTTP requests in absolute form
(`GET http://host/...`), to the hosts the allow-list names alone; anything else is refused with a 403 that says what
to add, and recorded, so the iteration's line and log say "blocked: pypi.org:443 — add it to sandbox.allow_hosts".

One thread accepts; each connection gets two threads, one relaying each way until its side stops writing.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Sequence

_HEAD_LIMIT = 64 * 1024
_CONNECT_S = 15.0
_CHUNK = 65536


def allows(patterns: Sequence[str], host: str, port: int) -> bool:
    """Whether `host:port` matches one of `patterns` (`host:port`, `*.domain:port` for its subdomains, `host:*`)."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        name, _, wanted = pattern.rpartition(":")
        if wanted not in ("*", str(port)):
            continue
        if name == host or (name.startswith("*.") and host.endswith(name[1:])):
            return True
    return False


class FilterProxy:
    """The proxy, accepting on `listener` (a listening socket it now owns) until `close`."""

    def __init__(self, patterns: Sequence[str], listener: socket.socket, quiet: Sequence[str] = ()) -> None:
        self.patterns = tuple(patterns)
        self.quiet = tuple(quiet)  # refused as the rest, never recorded: what the agent works without
        self._listener = listener
        self._blocked: list[str] = []
        self._lock = threading.Lock()
        self._closed = False
        self._open: set[socket.socket] = set()  # every connection's two ends, until it ends
        self._thread = threading.Thread(target=self._accept, name="ralph-sandbox-proxy", daemon=True)
        self._thread.start()

    def take_blocked(self) -> tuple[str, ...]:
        """The host:port it refused since the last time asked (an iteration's), each once, in order."""
        with self._lock:
            taken, self._blocked = tuple(self._blocked), []
        return taken

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=2.0)
        with self._lock:  # a connection still open ends with the proxy
            ends = list(self._open)
        for end in ends:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed; or out of descriptors a moment: it serves the whole run
                if not self._closed:
                    time.sleep(0.05)
                continue
            try:
                threading.Thread(target=self._serve, args=(client,), name="ralph-sandbox-relay", daemon=True).start()
            except RuntimeError:  # no thread to be had: this connection is refused, the proxy serves on
                client.close()

    def _serve(self, client: socket.socket) -> None:
        with client:
            client.settimeout(_CONNECT_S)  # a request's head comes at once, or never: its thread is not kept
            head, rest = _read_head(client)
            client.settimeout(None)
            request = _parse(head)
            if request is None:
                _answer(client, 400, "ralph's sandbox proxy: not a proxy request")
                return
            method, host, port, forward = request
            if not allows(self.patterns, host, port):
                if not allows(self.quiet, host, port):
                    self._block(f"{host}:{port}")
                _answer(client, 403, f"ralph's sandbox: {host}:{port} is not allowed; add it to sandbox.allow_hosts")
                return
            try:
                upstream = socket.create_connection((host, port), timeout=_CONNECT_S)
            except OSError as exc:
                _answer(client, 502, f"ralph's sandbox proxy: {host}:{port}: {exc.strerror or exc}")
                return
            with upstream:
                upstream.settimeout(None)
                self._keep(client, upstream)
                if method == "CONNECT":
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    if rest:
                        upstream.sendall(rest)
                else:
                    upstream.sendall(forward + rest)
                _pipe(client, upstream)
                self._keep(client, upstream, kept=False)

    def _keep(self, *ends: socket.socket, kept: bool = True) -> None:
        with self._lock:
            (self._open.update if kept else self._open.difference_update)(ends)
            if kept and self._closed:  # closed meanwhile
                for end in ends:
                    with contextlib.suppress(OSError):
                        end.shutdown(socket.SHUT_RDWR)

    def _block(self, where: str) -> None:
        with self._lock:
            if where not in self._blocked:
                self._blocked.append(where)


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """The request's head (through the blank line) and what came after it, or (b"", b"") for none."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < _HEAD_LIMIT:
        try:
            more = client.recv(_CHUNK)
        except OSError:
            return b"", b""
        if not more:
            return b"", b""
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _parse(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, the head to send upstream) of a CONNECT or an absolute-form HTTP request."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return (method, host.strip("[]"), int(port), b"") if host and port.isdigit() else None
    if not target.startswith("http://"):
        return None
    authority, slash, path = target[len("http://") :].partition("/")
    host, colon, port = authority.rpartition(":")
    if not colon or not port.isdigit():
        host, port = authority, "80"
    kept = [line for line in lines[1:] if line and not line.lower().startswith(("connection:", "proxy-"))]
    forward = "\r\n".join([f"{method} {slash or '/'}{path} {version}", *kept, "Connection: close", "", ""])
    return method, host.strip("[]"), int(port), forward.encode("latin-1")


def _answer(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    with contextlib.suppress(OSError):
        client.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)


def _pipe(one: socket.socket, other: socket.socket) -> None:
    """Relay both ways until both sides have stopped writing: a side that ends its writing (a half-close) ends only
    that way, so what the other side still sends arrives."""

    def copy(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(_CHUNK):
                target.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=copy, args=(other, one), daemon=True)
    back.start()
    copy(one, other)
    back.join()
