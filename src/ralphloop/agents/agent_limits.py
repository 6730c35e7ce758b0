"""The agents' limits, per account, shared by every loop of the user: `<ralph home>/agent-limits.json`.

When an agent hits its vendor's usage limit, the loop writes here until when that account is limited, so a
failover chain (`--agent claude,codex`) skips it, in this loop and in every other one, until the reset instant
passes. A key is `<backend>/<account>` ("claude/login:/home/me/.claude"): the account is the agent's own
`account` attribute, which names where its credentials come from, never a secret.

`mark` holds an exclusive flock on a side file for the few milliseconds of read, merge and atomic replace, so two
loops never lose each other's marks; `active` reads without the lock (the file is only ever replaced whole).
Expired marks are dropped when the file is next written.

Beside the marks, the book keeps each account's usage windows as its calls last reported them (issue 34:
`core/limits.UsageWindow`, with when it was read), so that every loop on one account sees one truth. A window whose
reset has passed is dropped: its share is no longer known.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime

from msgspec import Struct

from ralphloop.core.errors import RalphError
from ralphloop.core.limits import UsageWindow, WindowReading
from ralphloop.files.safe_read import STATE_CAP, check_file, read_file
from ralphloop.files.store import SCHEMA_VERSION, atomic_write_json, held

LIMITS_FILE = "agent-limits.json"
_MAX_KEYS = 256  # a file is never allowed to grow without bound: the oldest marks go first
_MAX_TEXT = 300
_MAX_WINDOWS = 16  # an account's windows kept (Claude reports four)


Windows = dict[str, dict[str, WindowReading]]  # account key → window name → its last reading


class Limited(Struct, frozen=True):
    """One account's limit: until when, of what kind, and the vendor's words."""

    until: datetime
    kind: str  # "usage_limit"
    message: str


class LimitBook:
    """The file at `path`: which agent accounts are limited, until when."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = os.fspath(path)

    def active(self, now: datetime) -> dict[str, Limited]:
        """The marks whose reset instant is still ahead of `now`."""
        moment = _utc(now)
        return {key: mark for key, mark in self._read()[0].items() if mark.until > moment}

    def windows(self, now: datetime) -> Windows:
        """Each account's windows, by name, that have not reset by `now` (one with no reset is kept as read)."""
        return _current(self._read()[1], _utc(now))

    def read(self, now: datetime) -> tuple[dict[str, Limited], Windows]:
        """The marks and the windows that hold at `now`, from one reading of the file."""
        moment = _utc(now)
        limits, windows = self._read()
        return {key: mark for key, mark in limits.items() if mark.until > moment}, _current(windows, moment)

    def mark(self, key: str, limited: Limited, now: datetime) -> None:
        """Record that `key` is limited until `limited.until` (a later mark of the same key replaces it); a
        reset already past is no limit, and is not written."""
        moment = _utc(now)
        if _utc(limited.until) <= moment:
            return
        mark = Limited(_utc(limited.until), limited.kind, limited.message[:_MAX_TEXT])
        self._change(moment, "the agent's limit", lambda limits, windows, had: limits.__setitem__(key, mark))

    def note(self, key: str, windows: tuple[UsageWindow, ...], now: datetime) -> tuple[UsageWindow, ...]:
        """Record the windows a call of `key` reported just now (each replaces what was known of its name); the
        same windows as the book last had them, read under the same lock (one whose reset has passed too: the
        reading of a window before it began again)."""
        moment = _utc(now)
        read = {window.name: WindowReading(_window_utc(window), moment) for window in windows}
        before: list[UsageWindow] = []

        def put(limits: dict[str, Limited], known: Windows, had: Windows) -> None:
            last = had.get(key, {})
            before.extend(last[name].window for name in read if name in last)
            known[key] = {**known.get(key, {}), **read}

        if read:
            self._change(moment, "the agent's usage windows", put)
        return tuple(before)

    def check(self) -> None:
        """The file and its lock are absent or regular files, and the file reads (before a run starts)."""
        check_file(self.path + ".lock", f"{self.path}.lock (the agents' limits lock)", cap=4096, follow=False)
        self._read()

    def _change(
        self, moment: datetime, what: str, edit: Callable[[dict[str, Limited], Windows, Windows], None]
    ) -> None:
        """Read, `edit` (the marks and windows that hold, and every window as read), and replace the file whole,
        under the lock: the expired marks and windows dropped."""
        try:
            os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
            with held(self.path + ".lock"):
                limits, windows = self._read()
                kept = {key: mark for key, mark in limits.items() if mark.until > moment}
                known = _current(windows, moment)
                edit(kept, known, windows)
                newest = sorted(kept.items(), key=lambda item: item[1].until)[-_MAX_KEYS:]
                latest = sorted(known.items(), key=lambda item: max(r.read_at for r in item[1].values()))
                body = {
                    "limits": {name: _as_json(mark) for name, mark in newest},
                    "windows": {key: _windows_json(read) for key, read in latest[-_MAX_KEYS:] if read},
                }
                atomic_write_json(self.path, body)
        except OSError as exc:
            raise RalphError(f"{self.path}: cannot record {what} ({exc.strerror or exc})") from None

    def _read(self) -> tuple[dict[str, Limited], Windows]:
        data = read_file(self.path, f"{self.path} (the agents' limits)", cap=STATE_CAP, follow=False)
        if data is None:
            return {}, {}
        try:
            return _parse(data)
        except ValueError as exc:
            raise RalphError(
                f"{self.path}: not a valid file of agent limits ({exc}); delete it to forget every agent's limit"
            ) from None


def _current(windows: Windows, moment: datetime) -> Windows:
    """The windows not reset by `moment`."""
    kept = {
        key: {
            name: read
            for name, read in read_by_name.items()
            if read.window.resets_at is None or read.window.resets_at > moment
        }
        for key, read_by_name in windows.items()
    }
    return {key: dict(sorted(read.items())[:_MAX_WINDOWS]) for key, read in kept.items() if read}


def _parse(data: bytes) -> tuple[dict[str, Limited], Windows]:
    try:
        body = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"bad JSON: {exc}") from None
    if not isinstance(body, dict) or body.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"not a JSON object with schema_version {SCHEMA_VERSION}")
    limits = body.get("limits")
    if not isinstance(limits, dict):
        raise ValueError("no mapping of limits")
    found: dict[str, Limited] = {}
    for key, mark in limits.items():
        if not isinstance(mark, dict) or not isinstance(mark.get("until"), str):
            raise ValueError(f"the limit of {key[:60]!r} has no time")
        until = _instant(mark["until"], f"the limit of {key[:60]!r}")
        found[key] = Limited(until, str(mark.get("kind") or "usage_limit"), str(mark.get("message") or ""))
    windows = body.get("windows", {})  # a book an older ralph wrote has none
    if not isinstance(windows, dict) or not all(isinstance(read, dict) for read in windows.values()):
        raise ValueError("no mapping of usage windows")
    return found, {key: _readings(key, read) for key, read in windows.items()}


def _readings(key: str, read: dict[str, object]) -> dict[str, WindowReading]:
    found: dict[str, WindowReading] = {}
    for name, fields in read.items():
        where = f"the {name[:30]!r} window of {key[:60]!r}"
        if not isinstance(fields, dict):
            raise ValueError(f"{where} is not a mapping")
        share = fields.get("utilization")
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
            raise ValueError(f"{where} has no share from 0 to 1")
        resets = fields.get("resetsAt")
        if not isinstance(fields.get("readAt"), str) or not (resets is None or isinstance(resets, str)):
            raise ValueError(f"{where} has no time it was read")
        at = _instant(resets, where) if resets is not None else None
        found[name] = WindowReading(UsageWindow(name, float(share), at), _instant(fields["readAt"], where))
    return found


def _instant(text: str, what: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            raise ValueError("no time zone")
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValueError(f"{what} has a bad time") from None


def _windows_json(read: dict[str, WindowReading]) -> dict[str, dict[str, object]]:
    return {
        name: {
            "utilization": reading.window.utilization,
            "resetsAt": _iso(reading.window.resets_at) if reading.window.resets_at else None,
            "readAt": _iso(reading.read_at),
        }
        for name, reading in read.items()
    }


def _window_utc(window: UsageWindow) -> UsageWindow:
    return UsageWindow(window.name, window.utilization, _utc(window.resets_at) if window.resets_at else None)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _as_json(mark: Limited) -> dict[str, str]:
    return {"until": _iso(mark.until), "kind": mark.kind, "message": mark.message}


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("the agents' limits need a timezone-aware time")
    return moment.astimezone(UTC)
