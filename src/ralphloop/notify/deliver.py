"""Sending a notification: a desktop notifier (one short-lived process), a JSON POST, and apprise's URLs.

Each way is an effect that returns what went wrong (None when it went out) and never raises; `Channels.send`
runs them all for one note and returns the warnings to show. They run on the notifier's own thread (sink.py),
never on the loop's: each has a timeout, and a failure is a warning line, redacted, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from ralphloop.notify.events import Note, payload, safe_text
from ralphloop.notify.settings import TIMEOUT_S, NotifySettings
from ralphloop.notify.urls import mask, origin
from ralphloop.words.textsafe import one_line, strip_terminal_controls

# Desktop notifiers, the first found on PATH wins.
NOTIFIERS = ("notify-send", "osascript", "tt")
TITLE = "ralph"


class Channels:
    """Where this run's notifications go; one instance, used by the notifier's thread alone."""

    def __init__(self, settings: NotifySettings, env: Mapping[str, str], timeout: float = TIMEOUT_S) -> None:
        self.settings, self.env, self.timeout = settings, env, timeout
        self.host = host_name()
        self._apprise: Any = None  # via_apprise.Targets, once prepared
        self._told: dict[str, str] = {}  # channel → the last problem warned about (told once until it mends)

    def prepare(self) -> list[str]:
        """Load apprise and read its URLs (half a second or more): done once, early, off the loop's thread."""
        if not self.settings.urls or self._apprise is not None:
            return []
        from ralphloop.notify.via_apprise import Targets

        self._apprise = Targets(self.settings.urls, self.timeout)
        return self._after([("apprise", problem) for problem in self._apprise.problems])

    def send(self, note: Note, feature_dir: str) -> list[str]:
        """Deliver `note` everywhere it goes; the warnings to show (a problem told again only once it changed)."""
        found: list[tuple[str, str | None]] = []
        if self.settings.desktop is not False:
            found.append(("desktop", _desktop(self.settings, note.text, self.env, self.timeout)))
        if self.settings.webhook:
            body = payload(note, feature_dir, host=self.host)
            url = self.settings.webhook
            problem = post_json(url, body, self.timeout)
            found.append(("webhook", f"webhook {origin(url)} failed: {mask(problem, [url])}" if problem else None))
        if self.settings.urls:
            warnings = self.prepare()
            found += self._apprise.send(note.title, note.body)
            return warnings + self._after(found)
        return self._after(found)

    def _after(self, found: list[tuple[str, str | None]]) -> list[str]:
        warnings = []
        for channel, problem in found:
            if problem is None:
                self._told.pop(channel, None)
            elif self._told.get(channel) != problem:
                self._told[channel] = problem
                warnings.append(f"notification: {problem}")
        return warnings


def _desktop(settings: NotifySettings, text: str, env: Mapping[str, str], timeout: float) -> str | None:
    executable = find_notifier(env)
    if executable is None:
        if settings.desktop:
            return "no desktop notifier found (notify-send, osascript or tt on PATH)"
        return None
    problem = run_notifier(desktop_argv(executable, text), env, timeout)
    return f"{os.path.basename(executable)} failed: {problem}" if problem else None


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
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        return "not a valid URL"  # config refuses one: never repeat it, it may hold a token
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
        reason = one_line(strip_terminal_controls(exc.reason), 120) if isinstance(exc.reason, str) else ""
        return f"HTTP {exc.code}" + (f" {reason}" if reason else "")
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


def _no_redirect_handler() -> type:
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return NoRedirect


def host_name() -> str:
    """This machine's name, for the payload ("" when it has none to give): the kernel's node name, which is what
    gethostname answers, without importing socket (2 ms of every run's start)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    try:
        return socket.gethostname()
    except OSError:
        return ""
