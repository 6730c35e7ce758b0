"""The sandbox's way out (issue 35, `sandbox.network: allow`): ralph's FilterProxy with real sockets and a real
client process. Here it accepts on the machine's loopback, which is all these tests need: the run's network it
listens in inside the box (processes/box_network.py) is proven in test_box_network.py and
tests/integration/test_sandbox.py."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from ralphloop.processes.proxy import FilterProxy

# a client: asks the proxy at PORT for TARGET (CONNECT), sends SIZE bytes, half-closes, and says whether what came
# back is what it sent
CLIENT = """
import hashlib, os, socket, sys
port, size, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
sock = socket.create_connection(("127.0.0.1", port))
sock.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
head = b""
while b"\\r\\n\\r\\n" not in head:
    head += sock.recv(1)
print(head.split(b"\\r\\n")[0].decode(), flush=True)
if b" 200 " not in head:
    sys.exit(3)
payload = os.urandom(size)
sock.sendall(payload)
sock.shutdown(socket.SHUT_WR)
back = b""
while more := sock.recv(65536):
    back += more
print(hashlib.sha256(payload).digest() == hashlib.sha256(back).digest(), len(back), flush=True)
"""


@pytest.fixture
def echo() -> Iterator[int]:
    """A TCP server on loopback that sends back what it reads, until the client stops writing."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve(client: socket.socket) -> None:
        with client:
            while data := client.recv(65536):
                client.sendall(data)
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_WR)

    def accept() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


@pytest.fixture
def proxy_for() -> Iterator[list[FilterProxy]]:
    made: list[FilterProxy] = []
    yield made
    for each in made:
        each.close()


def _proxy(made: list[FilterProxy], *patterns: str, quiet: tuple[str, ...] = ()) -> tuple[FilterProxy, int]:
    listener = socket.create_server(("127.0.0.1", 0))
    made.append(FilterProxy(patterns, listener, quiet))
    return made[-1], listener.getsockname()[1]


def _client(port: int, size: int, target: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", CLIENT, str(port), str(size), target]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def test_an_allowed_host_gets_every_byte_both_ways_past_a_half_close(echo: int, proxy_for: list[FilterProxy]) -> None:
    proxy, port = _proxy(proxy_for, f"127.0.0.1:{echo}")
    done = _client(port, 3_000_000, f"127.0.0.1:{echo}")
    assert done.stdout.splitlines() == ["HTTP/1.1 200 Connection established", "True 3000000"], done.stderr
    assert proxy.take_blocked() == ()


def test_a_host_not_allowed_is_refused_with_what_to_add_and_recorded_once_per_iteration(
    echo: int, proxy_for: list[FilterProxy]
) -> None:
    proxy, port = _proxy(proxy_for, "pypi.org:443", "*.example.com:*")
    target = f"127.0.0.1:{echo}"
    for _ in range(2):
        done = _client(port, 10, target)
        assert done.stdout.splitlines() == ["HTTP/1.1 403 Forbidden"]
        assert done.returncode == 3
    with socket.create_connection(("127.0.0.1", port)) as plain:
        plain.sendall(b"GET http://127.0.0.1:9/x HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
        answer = plain.recv(4096).decode()
    assert answer.startswith("HTTP/1.1 403 Forbidden")
    assert "127.0.0.1:9 is not allowed; add it to sandbox.allow_hosts" in answer
    assert proxy.take_blocked() == (target, "127.0.0.1:9")
    assert proxy.take_blocked() == ()  # the next iteration's list starts empty
    _client(port, 10, target)
    assert proxy.take_blocked() == (target,)


def test_a_quiet_host_is_refused_as_the_rest_and_never_recorded(echo: int, proxy_for: list[FilterProxy]) -> None:
    """The CLI's own telemetry (SandboxNeeds.quiet_hosts): refused, and not told on every iteration's line."""
    proxy, port = _proxy(proxy_for, "pypi.org:443", quiet=("127.0.0.1:*",))
    done = _client(port, 10, f"127.0.0.1:{echo}")
    assert done.stdout.splitlines() == ["HTTP/1.1 403 Forbidden"]
    assert proxy.take_blocked() == ()


def test_what_is_not_a_proxy_request_is_a_400_and_blocks_nothing(proxy_for: list[FilterProxy]) -> None:
    proxy, port = _proxy(proxy_for, "pypi.org:443")
    with socket.create_connection(("127.0.0.1", port)) as plain:
        plain.sendall(b"GET /relative HTTP/1.1\r\n\r\n")
        assert plain.recv(4096).startswith(b"HTTP/1.1 400 Bad Request")
    assert proxy.take_blocked() == ()


def test_closing_it_ends_a_connection_still_open(echo: int, proxy_for: list[FilterProxy]) -> None:
    proxy, port = _proxy(proxy_for, f"127.0.0.1:{echo}")
    held = socket.create_connection(("127.0.0.1", port), timeout=10)
    held.sendall(f"CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n".encode())
    assert held.recv(4096).startswith(b"HTTP/1.1 200")
    proxy.close()
    assert held.recv(4096) == b""  # ended, not left hanging
    held.close()
