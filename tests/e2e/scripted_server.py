"""What every loopback fake of a vendor's API shares (fake_anthropic.py, fake_openai.py, fake_openai_chat.py,
fake_gemini.py): a script of turns taken one per main request, every request recorded, a threaded HTTP server on
127.0.0.1 that a context manager starts and stops, and the handler's plumbing (reading a request's body, recording
it, writing an answer). A fake adds its request and reply types and its handler's `_answer`, which turns a reply
into HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar


class MainRequest(Protocol):
    @property
    def is_main(self) -> bool:
        """Whether the request takes a scripted turn (the conversation itself, not a side request)."""
        ...


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One request a fake received; `body` is the parsed JSON body, or None when there was none (or no JSON).
    A fake's own request type adds `is_main` (and what its tests read of a request)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?")[0]


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


class ScriptedHandler(BaseHTTPRequestHandler):
    """What every fake's handler shares: each request's body read (chunked or not) and parsed, the request recorded
    as the fake's `request_type` (which takes the main request's turn), and answers written with the headers the
    fake adds. A fake's handler writes the answer in `_answer`."""

    fake: ScriptedServer[Any, Any]  # set by ScriptedServer.start
    request_type: ClassVar[type[HttpRequest]]
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the recorded requests tell the story
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        raw = self._read_body()
        headers = {key.lower(): value for key, value in self.headers.items()}
        request = self.request_type(self.command, self.path, headers, self._parse(raw))
        self._answer(request, self.fake._record(request), raw)

    def _answer(self, request: Any, reply: Any, raw: bytes) -> None:
        """Write the answer to `request`: `reply` is its scripted turn (None for a request that takes none)."""
        raise NotImplementedError

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _parse(self, raw: bytes) -> Any:
        """The request's JSON body; None when it has none or it is not JSON."""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _own_headers(self) -> Mapping[str, str]:
        """The headers the fake adds to every answer (a request id, a test's headers)."""
        return {}

    def _send(self, status: int, content_type: str, payload: bytes, extra: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for key, value in {**self._own_headers(), **(extra or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _send_json(self, status: int, data: Any, extra: Mapping[str, str] | None = None) -> None:
        self._send(status, "application/json", json.dumps(data).encode(), extra)

    def _send_events(self, events: Iterable[dict[str, Any]]) -> None:
        """Server-sent events named by their data's `type` (`event: TYPE`), as Anthropic's and OpenAI's Responses
        API stream them."""
        stream = "".join(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n" for data in events)
        self._send(200, "text/event-stream", stream.encode())
