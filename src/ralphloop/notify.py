"""Notifications when a `ralph run` ends (config `notify`): a desktop notification and a webhook.

The pure parts (whether an ending is notified, the text, the JSON payload, the notifier's argv, the URL
checks) are separate from the two effects (one short-lived process, one HTTP POST). A notification that
fails is a warning for the user, never an error: `notify_end` returns warning texts and never raises.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from ralphloop.exitcodes import ExitReason
from ralphloop.redact import redact, secret_values
from ralphloop.tasks.formats import format_of
from ralphloop.textsafe import one_line, strip_terminal_controls

if TYPE_CHECKING:
    from ralphloop.events import LoopEnded

# What ends a run, as `notify.on` names it.
NOTIFY_EVENTS = ("complete", "halt", "interrupt")
# Interrupted: the user pressed Ctrl+C and is at the terminal already.
DEFAULT_EVENTS = ("complete", "halt")
# Desktop notifiers, the first found on PATH wins.
NOTIFIERS = ("notify-send", "osascript", "tt")
TIMEOUT_S = 5.0
TITLE = "ralph"
_MESSAGE_LIMIT = 300


class NotifySettings(Struct, frozen=True):
    """The `notify` section, resolved. `desktop` None: notify when a desktop notifier exists."""

    desktop: bool | None = None
    webhook: str | None = None
    on: tuple[str, ...] = DEFAULT_EVENTS


# ---------------------------------------------------------------- pure parts


def event_kind(reason: ExitReason) -> str:
    """complete, interrupt, or halt (every other way a run stops)."""
    if reason in (ExitReason.COMPLETE, ExitReason.STORY_DONE):
        return "complete"
    if reason is ExitReason.INTERRUPTED:
        return "interrupt"
    return "halt"


def notified(settings: NotifySettings, reason: ExitReason) -> str | None:
    """The event kind when this ending is notified, else None."""
    kind = event_kind(reason)
    return kind if kind in settings.on else None


def safe_text(text: str, env: Mapping[str, str]) -> str:
    """`text` on one line, without escapes or controls, with secrets masked, at most 300 characters."""
    plain = strip_terminal_controls(text)
    masked = redact(plain.encode("utf-8", "surrogateescape"), secret_values([env]))
    return one_line(masked.decode("utf-8", "replace"), _MESSAGE_LIMIT)


def message(event: LoopEnded, feature: str, source_kind: str = "prd", env: Mapping[str, str] | None = None) -> str:
    """The notification's one line, e.g. "ralph: auth complete — 5/5 stories in 12 iterations"."""
    env = os.environ if env is None else env
    unit = format_of(source_kind).units.lower()
    runs = f"{event.iterations} iteration{'s' if event.iterations != 1 else ''}"
    if event.tally.uncounted:
        runs += f" (+{event.tally.uncounted} not counted)"
    kind = event_kind(event.reason)
    if kind == "complete":
        what = f"{event.scope} done" if event.scope and event.reason is not ExitReason.COMPLETE else "complete"
        text = f"ralph: {feature} {what} — {event.done}/{event.total} {unit} in {runs}"
    elif kind == "interrupt":
        text = f"ralph: {feature} interrupted after {runs} — {event.done}/{event.total} {unit}"
    else:
        text = f"ralph: {feature} stopped ({event.reason.value}): {event.message}"
    return safe_text(text, env)


def payload(
    event: LoopEnded,
    feature: str,
    feature_dir: str,
    *,
    source_kind: str = "prd",
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    host: str = "",
) -> dict[str, Any]:
    """The webhook's JSON body. `text` is the notification line (what chat webhooks show)."""
    env = os.environ if env is None else env
    when = (now or datetime.now(UTC)).astimezone(UTC)
    return {
        "event": event_kind(event.reason),
        "feature": safe_text(feature, env),
        "featureDir": feature_dir,
        "reason": event.reason.value,
        "exitCode": event.reason.exit_code,
        "message": safe_text(event.message, env),
        "text": message(event, feature, source_kind, env),
        "iterations": event.iterations,
        "storiesComplete": event.done,
        "storiesTotal": event.total,
        "durationSeconds": round(event.duration_s, 3),
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": host,
    }


def applescript_string(text: str) -> str:
    """`text` as an AppleScript string literal, quotes included."""
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )
    return f'"{escaped}"'


def desktop_argv(executable: str, text: str) -> list[str]:
    """The argv that shows `text` with the notifier at `executable` (never a shell)."""
    name = os.path.basename(executable)
    if name == "osascript":
        return [
            executable,
            "-e",
            f"display notification {applescript_string(text)} with title {applescript_string(TITLE)}",
        ]
    if name == "tt":
        return [executable, "notify", text]
    return [executable, f"--app-name={TITLE}", TITLE, text]


def find_notifier(env: Mapping[str, str]) -> str | None:
    """The first of notify-send, osascript and tt on the environment's PATH, as a path."""
    search = env.get("PATH", os.defpath)
    for name in NOTIFIERS:
        found = shutil.which(name, path=search)
        if found:
            return found
    return None


def check_webhook_url(url: str) -> str:
    """`url` when it is an http:// or https:// URL with a host; ValueError otherwise. The error never repeats
    the URL, which often carries a token."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("expected an http:// or https:// URL")
    url = url.strip()
    if any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in url):
        raise ValueError("expected a URL without spaces or control characters")
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("http", "https"):
        shown = f" (not {scheme}://)" if scheme.isalnum() and len(scheme) < 16 else ""
        raise ValueError(f"expected an http:// or https:// URL{shown}")
    from urllib.parse import urlsplit  # urllib costs ~2 ms of import: only when a webhook is set

    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        raise ValueError("the URL's port is not a number from 1 to 65535") from None
    if not parts.hostname:
        raise ValueError("the URL has no host")
    return url


def origin(url: str) -> str:
    """scheme://host[:port] of `url`: what a warning may show (no credentials, path or query)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = parts.port
    except ValueError:
        return "(invalid URL)"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port else "")


# ---------------------------------------------------------------- effects


def notify_end(
    settings: NotifySettings,
    event: LoopEnded,
    feature: str,
    feature_dir: str,
    env: Mapping[str, str] = os.environ,
    *,
    source_kind: str = "prd",
    timeout: float = TIMEOUT_S,
) -> list[str]:
    """Send the notifications this ending calls for; the warnings to show. Never raises."""
    warnings: list[str] = []
    try:
        kind = notified(settings, event.reason)
        if kind is None:
            return warnings
        if settings.desktop is not False:
            problem = _desktop(settings, message(event, feature, source_kind, env), env, timeout)
            if problem:
                warnings.append(f"notification: {problem}")
        if settings.webhook:
            body = payload(event, feature, feature_dir, source_kind=source_kind, env=env, host=_host())
            problem = post_json(settings.webhook, body, timeout)
            if problem:
                warnings.append(f"notification: webhook {origin(settings.webhook)} failed: {problem}")
    except Exception as exc:  # a notification must never cost the run its exit code
        warnings.append(f"notification: failed: {one_line(strip_terminal_controls(str(exc)) or type(exc).__name__)}")
    return warnings


def _desktop(settings: NotifySettings, text: str, env: Mapping[str, str], timeout: float) -> str | None:
    executable = find_notifier(env)
    if executable is None:
        if settings.desktop:
            return "no desktop notifier found (notify-send, osascript or tt on PATH)"
        return None
    problem = run_notifier(desktop_argv(executable, text), env, timeout)
    return f"{os.path.basename(executable)} failed: {problem}" if problem else None


def run_notifier(argv: list[str], env: Mapping[str, str], timeout: float) -> str | None:
    """Run a notifier to its end (or kill it at `timeout`); None when it succeeded, else what went wrong.
    Its output goes to /dev/null and a temporary file, never to a pipe a leftover child could hold open."""
    import signal
    import tempfile

    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env=dict(env),
                start_new_session=True,
            )
        except OSError as exc:
            return f"cannot start: {exc.strerror or exc}"
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return f"no answer within {timeout:g}s"
        if code == 0:
            return None
        errors.seek(0)
        detail = safe_text(errors.read(4096).decode("utf-8", "replace"), env)[:200]
    return f"exit code {code}" + (f": {detail}" if detail else "")


def post_json(url: str, body: Mapping[str, Any], timeout: float) -> str | None:
    """POST `body` as JSON to `url`; None on a 2xx answer, else what went wrong (never the URL itself).
    Credentials in the URL (https://user:token@host/...) go in an Authorization header; redirects are
    not followed (a webhook that answers one is misconfigured)."""
    import base64
    import http.client
    import urllib.error
    import urllib.request
    from urllib.parse import unquote, urlsplit, urlunsplit

    from ralphloop import __version__

    headers = {"Content-Type": "application/json", "User-Agent": f"ralphloop/{__version__}"}
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        host = parts.netloc.rsplit("@", 1)[1]
        url = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    opener = urllib.request.build_opener(_no_redirect_handler())
    try:
        with opener.open(request, timeout=timeout) as response:
            response.read(64 * 1024)
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}" + (f" {exc.reason}" if isinstance(exc.reason, str) and exc.reason else "")
    except urllib.error.URLError as exc:
        return _os_error(exc.reason)
    except TimeoutError:
        return f"no answer within {timeout:g}s"
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return _os_error(exc)
    return None


def _os_error(reason: object) -> str:
    """A network error in a few lowercase words: "connection refused", "timed out"."""
    if isinstance(reason, TimeoutError):
        return "timed out"
    if isinstance(reason, OSError) and reason.strerror:
        return one_line(strip_terminal_controls(reason.strerror[:1].lower() + reason.strerror[1:]), 200)
    text = str(reason) or type(reason).__name__
    return one_line(strip_terminal_controls(text), 200)


def _host() -> str:
    import socket

    try:
        return socket.gethostname()
    except OSError:
        return ""


def _no_redirect_handler() -> type:
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return NoRedirect
