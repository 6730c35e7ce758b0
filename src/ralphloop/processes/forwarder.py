"""Inside the sandbox, with `sandbox.network: allow` (issue 35): the agent's only way out. The box has a network of
its own (loopback alone); this program listens on 127.0.0.1:PORT there (HTTP_PROXY and HTTPS_PROXY point to it),
passes each connection to ralph's filtering proxy through the unix socket bound into the box, starts the agent's
command, and ends with it (its exit status, its signal passed on).

Run as a file by the box's interpreter, `python -S -I forwarder.py SOCKET PORT -- ARGV...`: standard library only,
and only the modules a bare interpreter starts fastest with (it runs before every agent call): `_socket` and
`_signal`, not `socket` and `signal` (which import enum).
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # `signal` imports enum
import _socket
import os
import select
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Peers = dict[int, tuple[Any, Any]]  # fd → (its socket, the other end)

_CHUNK = 65536


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: forwarder.py SOCKET PORT -- ARGV...\n")
        return 2
    socket_path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    child = os.fork()
    if child == 0:
        listener.close()
        os.close(wake_read)
        os.close(wake_write)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"{command[0]}: {exc.strerror or exc}\n")
        os._exit(127)

    def pass_on(number: int, frame: object) -> None:
        try:
            os.kill(child, number)
        except ProcessLookupError:
            return

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, pass_on)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)
    peers: Peers = {}
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done == child:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
        try:
            ready, _, _ = select.select([listener, wake_read, *(pair[0] for pair in peers.values())], [], [], 1.0)
        except InterruptedError:
            continue
        for each in ready:
            if each is wake_read:
                os.read(wake_read, 512)
            elif each is listener:
                _accept(listener, socket_path, peers)
            else:
                _relay(each, peers)


def _accept(listener: Any, socket_path: str, peers: Peers) -> None:
    try:
        fd, _ = listener._accept()
    except OSError:
        return
    inner = _socket.socket(fileno=fd)
    outer = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        outer.connect(socket_path)
    except OSError:
        inner.close()
        outer.close()
        return
    peers[inner.fileno()] = (inner, outer)
    peers[outer.fileno()] = (outer, inner)


def _relay(sock: Any, peers: Peers) -> None:
    pair = peers.get(sock.fileno())
    if pair is None:  # closed a moment ago, with the other end of its pair
        return
    own, other = pair
    try:
        data = sock.recv(_CHUNK)
    except OSError:
        data = b""
    if data:
        try:
            other.sendall(data)
            return
        except OSError:
            pass
    for end in (own, other):
        peers.pop(end.fileno(), None)
        end.close()


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(code)  # the interpreter's own shutdown costs milliseconds, before every agent call's end
