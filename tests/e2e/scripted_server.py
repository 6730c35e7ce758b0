"""What every loopback fake of a vendor's API shares (fake_anthropic.py, fake_openai.py): a script of turns taken
one per main request, every request recorded, and a threaded HTTP server on 127.0.0.1 that a context manager
starts and stops. A fake adds its request and reply types and its handler, which turns HTTP into them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import ClassVar, Generic, Protocol, Self, TypeVar


class MainRequest(Protocol):
    @property
    def is_main(self) -> bool:
        """Whether the request takes a scripted turn (the conversation itself, not a side request)."""
        ...


RequestT = TypeVar("RequestT", bound=MainRequest)
ReplyT = TypeVar("ReplyT")


class ScriptedServer(Generic[RequestT, ReplyT]):
    """The script, the record and the server's life; a subclass names its handler and its URL's path."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]  # gets a `fake` attribute: this server
    path: ClassVar[str] = ""  # what the base URL ends with ("/v1")

    def __init__(self, turns: Sequence[ReplyT | Callable[[RequestT], ReplyT]], default: ReplyT) -> None:
        self.default = default
        self._turns: list[ReplyT | Callable[[RequestT], ReplyT]] = list(turns)
        self._requests: list[RequestT] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def add_turns(self, *turns: ReplyT | Callable[[RequestT], ReplyT]) -> None:
        """Append turns to the script."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def pending(self) -> int:
        """How many scripted turns have not been consumed yet."""
        with self._lock:
            return len(self._turns)

    @property
    def requests(self) -> list[RequestT]:
        """A snapshot of every request received so far, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def main_requests(self) -> list[RequestT]:
        """Only the main requests (those that consumed, or would consume, a turn)."""
        return [request for request in self.requests if request.is_main]

    def _record(self, request: RequestT) -> ReplyT | None:
        """Store the request and, for a main request, take its turn (the default once the script ran out)."""
        with self._lock:
            self._requests.append(request)
            if not request.is_main:
                return None
            turn = self._turns.pop(0) if self._turns else self.default
        return turn(request) if callable(turn) else turn

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.path}"

    def start(self) -> Self:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        handler = type("Handler", (self.handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
