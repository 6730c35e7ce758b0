"""The agents' limits, per account, shared by every loop of the user: `<ralph home>/agent-limits.json`.

When an agent hits its vendor's usage limit, the loop writes here until when that account is limited, so a
failover chain (`--agent claude,codex`) skips it, in this loop and in every other one, until the reset instant
passes. A key is `<backend>/<account>` ("claude/login:/home/me/.claude"): the account is the agent's own
`account` attribute, which names where its credentials come from, never a secret.

`mark` holds an exclusive flock on a side file for the few milliseconds of read, merge and atomic replace, so two
loops never lose each other's marks; `active` reads without the lock (the file is only ever replaced whole).
Expired marks are dropped when the file is next written.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from msgspec import Struct

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import STATE_CAP, check_file, read_file
from ralphloop.files.store import SCHEMA_VERSION, atomic_write_json, held

LIMITS_FILE = "agent-limits.json"
_MAX_KEYS = 256  # a file is never allowed to grow without bound: the oldest marks go first
_MAX_TEXT = 300


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
        return {key: mark for key, mark in self._read().items() if mark.until > moment}

    def mark(self, key: str, limited: Limited, now: datetime) -> None:
        """Record that `key` is limited until `limited.until` (a later mark of the same key replaces it); a
        reset already past is no limit, and is not written."""
        moment = _utc(now)
        if _utc(limited.until) <= moment:
            return
        try:
            os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
            with held(self.path + ".lock"):
                kept = {key: mark for key, mark in self._read().items() if mark.until > moment}
                kept[key] = Limited(_utc(limited.until), limited.kind, limited.message[:_MAX_TEXT])
                newest = sorted(kept.items(), key=lambda item: item[1].until)[-_MAX_KEYS:]
                atomic_write_json(self.path, {"limits": {name: _as_json(mark) for name, mark in newest}})
        except OSError as exc:
            raise RalphError(f"{self.path}: cannot record the agent's limit ({exc.strerror or exc})") from None

    def check(self) -> None:
        """The file and its lock are absent or regular files, and the file reads (before a run starts)."""
        check_file(self.path + ".lock", f"{self.path}.lock (the agents' limits lock)", cap=4096, follow=False)
        self._read()

    def _read(self) -> dict[str, Limited]:
        data = read_file(self.path, f"{self.path} (the agents' limits)", cap=STATE_CAP, follow=False)
        if data is None:
            return {}
        try:
            return _parse(data)
        except ValueError as exc:
            raise RalphError(
                f"{self.path}: not a valid file of agent limits ({exc}); delete it to forget every agent's limit"
            ) from None


def _parse(data: bytes) -> dict[str, Limited]:
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
        try:
            until = datetime.fromisoformat(mark["until"])
            if until.tzinfo is None:
                raise ValueError("no time zone")
            until = until.astimezone(UTC)
        except (ValueError, OverflowError):
            raise ValueError(f"the limit of {key[:60]!r} has a bad time") from None
        found[key] = Limited(until, str(mark.get("kind") or "usage_limit"), str(mark.get("message") or ""))
    return found


def _as_json(mark: Limited) -> dict[str, str]:
    return {"until": mark.until.isoformat().replace("+00:00", "Z"), "kind": mark.kind, "message": mark.message}


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("the agents' limits need a timezone-aware time")
    return moment.astimezone(UTC)
