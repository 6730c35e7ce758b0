"""What Codex's own session file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl`) adds to its
stream: the model it used (`turn_context.payload.model`), the account's `rate_limits` (`primary`/`secondary`
windows with `used_percent` and `resets_at` in unix seconds), and the shell tool's results (`function_call_output`):
a command its sandbox could not start may have no item in the `--json` stream (sandbox.py).

Read once, after the process ended, and only the file of the run's own thread; a missing, odd or huge file gives
nothing. The reset of a window at 100% is exact, where the CLI's sentence is cut to the minute.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ralphloop.agents.codex.sandbox import bwrap_failure, tool_output
from ralphloop.core.limits import UsageWindow
from ralphloop.files.safe_read import FileRefused, read_tail
from ralphloop.guards.reset_time import epoch_instant

_TAIL = 4 * 1024 * 1024  # the last turn's context and token counts are near the end
_KIND_BY_MINUTES = {300: "five_hour", 10080: "weekly"}
_WINDOW_BY_MINUTES = {300: "five_hour", 10080: "seven_day"}  # the names Claude's windows have, for one cap of each


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the session file says; None where it says nothing."""

    model: str | None = None
    resets_at: datetime | None = None  # the reset of a window that is used up
    kind: str = ""  # that window: five_hour, weekly, or ""
    sandbox_failure: str = ""  # bwrap's error, when the sandbox could not start a command
    commands_ran: bool = False  # a command ran (whatever its exit): the sandbox works
    windows: tuple[UsageWindow, ...] = ()  # the account's windows, as the last turn reported them


def codex_home(env: Mapping[str, str]) -> Path:
    """Where Codex keeps its sessions: $CODEX_HOME, else ~/.codex."""
    return Path(env.get("CODEX_HOME") or Path(env.get("HOME") or Path.home()) / ".codex")


def find(home: Path, thread_id: str, started: datetime) -> Path | None:
    """The session file of thread `thread_id`, in the day folders of the run's start and the day after
    (Codex names them in its local time, which ralph sets to UTC)."""
    if not thread_id or "/" in thread_id or thread_id.startswith("."):
        return None
    start = started.astimezone(UTC)
    for day in (start - timedelta(days=1), start, start + timedelta(days=1)):
        folder = home / "sessions" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith("rollout-") and name.endswith(f"-{thread_id}.jsonl"):
                return folder / name
    return None


def read(path: Path) -> SessionFacts:
    """The model and the used-up window of one session file (its last mention of each)."""
    try:
        found = read_tail(path, str(path), max_bytes=_TAIL)
    except (FileRefused, OSError):
        return SessionFacts()
    if found is None:
        return SessionFacts()
    data = found[0]
    model: str | None = None
    limits: Any = None
    commands = _Commands()
    for raw in data.split(b"\n"):
        if b'"turn_context"' not in raw and b'"rate_limits"' not in raw and b'"function_call_output"' not in raw:
            continue
        try:
            event = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        payload = event.get("payload") if isinstance(event, dict) else None
        if not isinstance(payload, dict):
            continue
        if event.get("type") == "turn_context" and isinstance(payload.get("model"), str) and payload["model"]:
            model = payload["model"]
        if isinstance(payload.get("rate_limits"), dict):
            limits = payload["rate_limits"]
        if payload.get("type") == "function_call_output" and isinstance(payload.get("output"), str):
            commands.saw(payload["output"])
    resets_at, kind = _used_up(limits)
    return SessionFacts(model, resets_at, kind, commands.failure, commands.ran, _windows(limits))


class _Commands:
    """The shell tool's results in order: the first sandbox failure, and whether any command ran."""

    def __init__(self) -> None:
        self.failure = ""
        self.ran = False

    def saw(self, result: str) -> None:
        found = tool_output(result)
        if found is None:
            return
        code, printed = found
        why = bwrap_failure(printed) if code else None
        if why is None:
            self.ran = True
        elif not self.failure:
            self.failure = why


def _used_up(limits: Any) -> tuple[datetime | None, str]:
    """The latest reset among the windows at 100%: the account is limited until all of them reset."""
    found: tuple[datetime | None, str] = (None, "")
    if not isinstance(limits, dict):
        return found
    for name in ("primary", "secondary"):
        window = limits.get(name)
        if not isinstance(window, dict):
            continue
        used = window.get("used_percent")
        if not isinstance(used, int | float) or isinstance(used, bool) or used < 100:
            continue
        at = epoch_instant(window.get("resets_at"))
        if at is not None and (found[0] is None or at > found[0]):
            minutes = window.get("window_minutes")
            found = (at, _KIND_BY_MINUTES.get(minutes, "") if isinstance(minutes, int) else "")
    return found


def _windows(limits: Any) -> tuple[UsageWindow, ...]:
    """`rate_limits.primary` and `secondary` as windows: each one's share used (`used_percent`) and its reset, named by
    its length (300 minutes: five_hour, 10080: seven_day, else `<N>_minutes`). One without a length or a share is
    left out: a share is never guessed."""
    found: dict[str, UsageWindow] = {}
    for slot in ("primary", "secondary"):
        window = limits.get(slot) if isinstance(limits, dict) else None
        if not isinstance(window, dict):
            continue
        used, minutes = window.get("used_percent"), window.get("window_minutes")
        if isinstance(used, bool) or not isinstance(used, int | float) or not math.isfinite(used):
            continue
        if isinstance(minutes, bool) or not isinstance(minutes, int) or not 0 < minutes < 10**7:
            continue
        name = _WINDOW_BY_MINUTES.get(minutes, f"{minutes}_minutes")
        found[name] = UsageWindow(name, min(max(float(used) / 100, 0.0), 1.0), epoch_instant(window.get("resets_at")))
    return tuple(found[name] for name in sorted(found))
