"""The usage windows of a run's agent accounts, as `ralph status`, the monitor and `ralph serve` show them (issue 34):
the share of each window used, its reset and when it was read, from the book every loop of the user writes
(`~/.ralph/agent-limits.json`, agents/agent_limits.py), with the user's cap on each. Which accounts a run uses, and
its caps, are in its status.json (`pacing`, written by the run).

Kept light on purpose (no msgspec, no datetime): `ralph status --json` reads this. A book that cannot be read gives no
windows, and a note saying why; a window whose reset has passed is left out (its share is no longer known).
"""

from __future__ import annotations

import os
import time

from ralphloop.core.errors import RalphError
from ralphloop.files.read import read_json_object
from ralphloop.project.paths import ralph_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BOOK = "agent-limits.json"  # agents/agent_limits.LIMITS_FILE (that module is too heavy to import here)


def now_iso() -> str:
    """The time now as the book writes it, to the second (ISO strings of one shape compare as times)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def account_windows(pacing: object, now: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """Each window of each account of the run, in the run's order of agents then by name: `{agent, account, window,
    utilization, resetsAt, cap, readAt}`; and a note when the book could not be read."""
    if not isinstance(pacing, dict) or not isinstance(pacing.get("accounts"), list):
        return [], None
    caps: dict[str, Any] = pacing["caps"] if isinstance(pacing.get("caps"), dict) else {}
    path = os.path.join(ralph_home(), BOOK)
    try:
        book = read_json_object(path) or {}
    except RalphError as exc:
        return [], str(exc)
    known: dict[str, Any] = book["windows"] if isinstance(book.get("windows"), dict) else {}
    moment = now or now_iso()
    found: list[dict[str, Any]] = []
    for each in pacing["accounts"]:
        if not isinstance(each, dict) or not isinstance(each.get("account"), str):
            continue
        read = known.get(each["account"])
        for name, fields in sorted(read.items()) if isinstance(read, dict) else ():
            window = _window(fields, moment)
            if window is not None:
                cap = caps.get(name, caps.get("all"))
                cap = cap if isinstance(cap, int | float) and not isinstance(cap, bool) else None
                found.append(
                    {"agent": each.get("agent"), "account": each["account"], "window": name, **window, "cap": cap}
                )
    return found, None


def _window(fields: object, now: str) -> dict[str, Any] | None:
    """One window as the book keeps it, or None when it has reset or is not one."""
    if not isinstance(fields, dict):
        return None
    share, resets, read = fields.get("utilization"), fields.get("resetsAt"), fields.get("readAt")
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        return None
    if resets is not None and (not isinstance(resets, str) or resets <= now):
        return None
    return {"utilization": share, "resetsAt": resets, "readAt": read if isinstance(read, str) else None}
