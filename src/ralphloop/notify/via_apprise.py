"""Notifications through apprise (the optional extra `ralphloop[notify]`): ntfy, Telegram, Slack, Discord, email,
Pushover and the rest, each named by a URL in `notify.urls`.

Imported on the notifier's thread alone, the first time it has URLs to serve (loading apprise and its services
takes over a second): never by `ralph status`, nor by a run that sets no URL. apprise logs through `logging`;
its logger is kept to itself here, its words read only to say why a send failed, and every part of the URL
that could be a secret (a token, a topic, a password) is masked in them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ralphloop.notify.settings import EXTRA
from ralphloop.notify.urls import mask, shown
from ralphloop.words.textsafe import one_line, strip_terminal_controls

WIKI = "https://github.com/caronc/apprise/wiki"


class _Said(logging.Handler):
    """apprise's warnings and errors while one URL is sent to (the reason a send failed)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(record.getMessage())
        except Exception:  # a message that cannot be formatted still says something failed
            self.lines.append(record.levelname.lower())


_SAID: list[_Said] = []


def _listen() -> _Said:
    """apprise's logger, kept to itself (neither the root's handlers nor Python's last resort on stderr see it):
    one handler for the process, whose words each send clears and reads."""
    if not _SAID:
        _SAID.append(_Said())
        logger = logging.getLogger("apprise")
        logger.handlers[:] = _SAID
        logger.propagate = False
        logger.setLevel(logging.WARNING)
    return _SAID[0]


class Targets:
    """The URLs apprise can send to, read once; `problems` says which it cannot (or that apprise is missing)."""

    def __init__(self, urls: Sequence[str], timeout: float) -> None:
        self.timeout = timeout
        self.problems: list[str] = []
        self.urls: list[tuple[int, str]] = []  # (its number in notify.urls, the URL)
        try:
            import apprise
        except ImportError:
            self.problems.append(f"notify.urls needs apprise, which is not installed: {EXTRA}")
            self._apprise: Any = None
            return
        self._apprise = apprise
        self._said = _listen()
        self._asset = apprise.AppriseAsset(app_id="ralph", app_desc="ralph, a coding agent in a loop")
        for number, url in enumerate(urls, start=1):
            if self._service(url) is None:
                self.problems.append(
                    f"{shown(url)} (URL {number} of notify.urls) is not a URL apprise can send to: see {WIKI}"
                )
            else:
                self.urls.append((number, url))

    def send(self, title: str, body: str) -> list[tuple[str, str | None]]:
        """Send to each URL in turn: (the channel's name, what went wrong or None) for each."""
        return [(f"apprise {number}", self._send(url, title, body)) for number, url in self.urls]

    def _service(self, url: str) -> Any:
        """A fresh apprise service for `url` (None when apprise does not know it). Fresh for each send: one kept
        would wait out its service's rate limit (over 5 s for some) between two notifications."""
        try:
            service = self._apprise.Apprise.instantiate(url, asset=self._asset)
        except Exception:
            return None
        if service is not None:
            service.socket_connect_timeout = self.timeout
            service.socket_read_timeout = self.timeout
        return service

    def _send(self, url: str, title: str, body: str) -> str | None:
        self._said.lines.clear()
        service = self._service(url)
        try:
            sent = service is not None and bool(service.notify(body=body, title=title))
        except Exception as exc:  # a service's bug is a failed notification, not a failed run
            self._said.lines.append(type(exc).__name__)
            sent = False
        if sent:
            return None
        said = self._said.lines[-1] if self._said.lines else "not delivered"
        detail = one_line(strip_terminal_controls(mask(said, [url])), 200)
        return f"{shown(url)} failed: {detail}"
