"""`ralph serve`'s routes, on Starlette: the page (`/`), the snapshot as JSON (`/api/snapshot`), live as
server-sent events (`/events`), and the controls (`POST /api/control`: pause, resume, stop, say, answer; issue 36).
Every request carries the token, in the query (`?token=`), in the cookie the page sets, or as `Authorization:
Bearer`; any other gets 401, whatever its path. A control sent from a page that is not this server's own (its
`Origin` another) gets 403: the token in a cookie must not let another site steer a loop.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import AsyncIterator, Callable
from importlib import resources

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ralphloop.core.errors import RalphError
from ralphloop.web.control import Asked, asked_of, carry_out
from ralphloop.web.live import Source

POLL_S = 0.5
KEEP_ALIVE_S = 15.0
# The page runs its one inline script and style and talks to this server alone: nothing else loads.
_POLICY = (
    "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_PRIVATE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}


def make_app(
    source: Source, token: str, cookie: str, stopping: Callable[[], bool], origins: tuple[str, ...] = ()
) -> ASGIApp:
    """The app: `source` gives the snapshots; `cookie` is the name the token is kept under (one per port: a
    browser shares 127.0.0.1's cookies between ports); the event streams end once `stopping()` is true; `origins`
    are the page's own (a control from any other is refused)."""
    page = resources.files("ralphloop.web").joinpath("page.html").read_text(encoding="utf-8")

    async def index(request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        headers = {**_PRIVATE, "Content-Security-Policy": _POLICY.format(nonce=nonce)}
        response = Response(page.replace("{{nonce}}", nonce), media_type="text/html", headers=headers)
        response.set_cookie(cookie, token, httponly=True, samesite="strict", path="/")
        return response

    async def snapshot(request: Request) -> Response:
        _, body = await anyio.to_thread.run_sync(source.current)
        return Response(body, media_type="application/json", headers=_PRIVATE)

    async def events(request: Request) -> Response:
        return StreamingResponse(
            _stream(source, stopping), media_type="text/event-stream", headers={**_PRIVATE, "X-Accel-Buffering": "no"}
        )

    async def control(request: Request) -> Response:
        origin = request.headers.get("origin")
        reached = f"{request.url.scheme}://{request.headers.get('host', '')}"  # the page as the browser reached it
        if origin is not None and origin not in (*origins, reached):  # a browser says where the page came from
            return _said(403, f"refused: sent from {origin[:200]}, not from this page")
        try:
            asked: Asked | str = asked_of(await request.json())
        except ValueError:
            asked = 'the body is not JSON: {"feature", "story", "action", "text"}'
        if isinstance(asked, str):
            return _said(400, asked)
        try:
            said = await anyio.to_thread.run_sync(carry_out, source.features, asked)
        except LookupError as exc:
            return _said(404, str(exc.args[0]))
        except RalphError as exc:
            return _said(409, str(exc))
        return JSONResponse({"ok": True, "said": said}, headers=_PRIVATE)

    routes = [
        Route("/", index),
        Route("/api/snapshot", snapshot),
        Route("/events", events),
        Route("/api/control", control, methods=["POST"]),
    ]
    return TokenGate(Starlette(routes=routes), token, cookie)


def _said(status: int, error: str) -> Response:
    return JSONResponse({"ok": False, "error": error}, status, headers=_PRIVATE)


async def _stream(source: Source, stopping: Callable[[], bool]) -> AsyncIterator[str]:
    """Each new snapshot as one event, a comment now and then to keep the connection open; ends on shutdown."""
    sent = -1
    quiet = anyio.current_time()
    yield "retry: 2000\n\n"
    while not stopping():
        version, body = await anyio.to_thread.run_sync(source.current)
        if version != sent:
            sent, quiet = version, anyio.current_time()
            yield f"data: {body}\n\n"  # JSON without indent holds no newline
        elif anyio.current_time() - quiet >= KEEP_ALIVE_S:
            quiet = anyio.current_time()
            yield ": keep-alive\n\n"
        await anyio.sleep(POLL_S)


class TokenGate:
    """Lets through a request with the token; answers 401 to any other."""

    def __init__(self, app: ASGIApp, token: str, cookie: str) -> None:
        self.app = app
        self.token = token.encode()
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # none served
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http" and not self.allowed(Request(scope)):
            refused = PlainTextResponse(
                "401 Unauthorized: open the URL ralph serve printed (it holds the token)\n", 401, headers=_PRIVATE
            )
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def allowed(self, request: Request) -> bool:
        bearer = request.headers.get("authorization", "")
        given = [
            request.query_params.get("token"),
            request.cookies.get(self.cookie),
            bearer[7:] if bearer[:7].lower() == "bearer " else None,
        ]
        # compare_digest: how long a wrong guess took says nothing of the token
        return any(hmac.compare_digest(value.encode(), self.token) for value in given if value)
