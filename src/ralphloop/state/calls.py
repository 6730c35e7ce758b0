"""The per-account call ledger: agent start times shared by every loop of the user.

One JSON file per account under `<ralph home>/calls/`. `take` holds an exclusive flock
on a side file for the few milliseconds of read, decide and atomic replace, so several
`ralph run` processes never grant the same slot twice nor lose each other's starts.
`peek` reads without the lock: the file is only ever replaced whole.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import STATE_CAP, check_file, read_file
from ralphloop.files.store import SCHEMA_VERSION, atomic_write_json, held
from ralphloop.guards import ratelimit
from ralphloop.guards.ratelimit import Slot
from ralphloop.words.patterns import lazy

CALLS_DIR = "calls"
_UNSAFE = lazy(r"[^A-Za-z0-9._-]")
_MAX_NAME = 128
_STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"


def ledger_path(home: str, account: str) -> str:
    """`<home>/calls/<account>.json`, with every character outside [A-Za-z0-9._-] made `_`."""
    name = _UNSAFE.sub("_", account)[:_MAX_NAME] or "_"
    return os.path.join(home, CALLS_DIR, f"{name}.json")


class CallLedger:
    """The start times of one account's agent calls, in the file at `path`."""

    __slots__ = ("account", "path")

    def __init__(self, path: str) -> None:
        self.path = os.fspath(path)
        self.account = os.path.basename(self.path).removesuffix(".json")

    def take(self, now: datetime, limit: int) -> Slot:
        """Record a start at `now` when fewer than `limit` started in the hour before it.

        Writes the file only when the start is granted or old starts were pruned.
        """
        moment = _utc(now)
        try:
            os.makedirs(os.path.dirname(self.path) or ".", mode=0o700, exist_ok=True)
            with held(self.path + ".lock"):
                starts = self._read()
                kept, slot = ratelimit.take(starts, moment, limit)
                if kept != starts:
                    atomic_write_json(self.path, {"account": self.account, "starts": [_stamp(s) for s in kept]})
        except OSError as exc:
            raise RalphError(f"{self.path}: cannot update the call ledger ({exc.strerror or exc})") from None
        return slot

    def peek(self, now: datetime, limit: int) -> Slot:
        """The decision a start at `now` would get, and the count so far; changes nothing."""
        return ratelimit.peek(self._read(), _utc(now), limit)

    def check(self) -> None:
        """The ledger and its lock file are absent or regular files (the lock is opened to write)."""
        check_file(self.path + ".lock", f"{self.path}.lock (the call ledger's lock)", cap=4096, follow=False)
        self._read()

    def _read(self) -> list[datetime]:
        data = read_file(self.path, f"{self.path} (the call ledger)", cap=STATE_CAP, follow=False)
        if data is None:
            return []
        try:
            return _parse(data)
        except ValueError as exc:
            raise RalphError(
                f"{self.path}: not a valid call ledger ({exc}); delete it to reset the rate-limit count"
            ) from None


def _parse(data: bytes) -> list[datetime]:
    """The start times in a ledger file; ValueError (with a short reason) when it is not one."""
    try:
        body = json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"bad JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ValueError("not a JSON object")
    version = body.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise ValueError(f"schema_version {_short(version)}, expected {SCHEMA_VERSION}")
    starts = body.get("starts")
    if not isinstance(starts, list):
        raise ValueError("no list of starts")
    return [_parse_stamp(item) for item in starts]


def _parse_stamp(item: object) -> datetime:
    if not isinstance(item, str):
        raise ValueError(f"start {_short(item)} is not a string")
    try:
        moment = datetime.fromisoformat(item)
    except ValueError:
        raise ValueError(f"start {_short(item)} is not an ISO time") from None
    if moment.tzinfo is None:
        raise ValueError(f"start {_short(item)} has no time zone")
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # year 1 east of UTC, year 9999 west of it
        raise ValueError(f"start {_short(item)} is out of range") from None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_STAMP)


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("the call ledger needs a timezone-aware time")
    return now.astimezone(UTC)
