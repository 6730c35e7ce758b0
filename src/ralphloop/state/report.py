"""The status report: where a feature's loop stands, read from its files alone (`ralph status --json`,
and what the monitor shows). Kept light on purpose (json, os, fcntl; prd.json read by tasks/prd_reading): it is
what scripts and prompts poll.
"""

from __future__ import annotations

import os

from ralphloop.core.errors import RalphError
from ralphloop.files.read import lock_holder_alive, read_json_object
from ralphloop.files.schemas import BREAKER, STATE, STATUS
from ralphloop.plugins.entry_points import load
from ralphloop.plugins.formats import detect, format_of
from ralphloop.project.paths import FeaturePaths
from ralphloop.state.usage_windows import account_windows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def task_counts(paths: FeaturePaths, kind: str | None, status: dict[str, Any]) -> tuple[int, int]:
    """Tasks done and in total: read afresh for a format whose row says how, lightly (prd.json); the others as
    the last iteration counted them (reading Markdown or YAML here would cost `ralph status` its speed)."""
    counts = format_of(kind).counts if kind is not None else ""
    if counts:
        counted: tuple[int, int] = load(counts)(paths)
        return counted
    done, total = status.get("storiesComplete", 0), status.get("storiesTotal", 0)
    return (done, total) if isinstance(done, int) and isinstance(total, int) else (0, 0)


def gather(paths: FeaturePaths, *, strict: bool = True) -> dict[str, Any]:
    """The report of `ralph status --json`. Not `strict` (the monitor): a prd.json missing or broken
    mid-run gives the counts status.json last wrote instead of an error."""
    raw = read_json_object(paths.status) or {}
    status = STATUS.load(raw)
    kind = detect(paths.dir)
    holder = lock_holder_alive(paths.lock)
    torn = None
    try:
        done, total = task_counts(paths, kind, status)
    except RalphError as exc:
        # An agent writes the task file in place: mid-write (a live loop), or torn by a kill (the journal says
        # an iteration was cut short; the next run settles it), it is the iteration's, not the user's, error.
        if strict and holder is None and not os.path.lexists(paths.journal):
            raise
        done, total = task_counts(paths, None, status)
        torn = f"{exc}; the counts are the last iteration's"
    state = STATE.load(read_json_object(paths.state))
    # The breaker's own file is the truth: `ralph reset-circuit` rewrites it without touching status.json.
    circuit = BREAKER.load(read_json_object(paths.circuit_state))
    # `ralph reset-circuit` since a run stopped on an open circuit: the circuit is no longer why it stands still
    reset_since = status.get("exitReason") == "circuit_open" and circuit.get("state", "CLOSED") != "OPEN"
    alive = holder is not None
    word = status.get("status") or "not started"
    note = None
    if word in ("running", "starting") and not alive:
        word = "stopped"
        note = "the last run ended without writing its final state (killed?)"
    elif reset_since and word == "circuit_open":
        word = "halted"
    elif word == "running" and alive and isinstance(status.get("waiting"), dict):
        # any wait: a limit, a backoff, the user's answer; the user's pause (core/steering.PAUSED) is its own word
        word = "paused" if status["waiting"].get("kind") == "paused" else "waiting"
    in_iteration = alive and (status["inIteration"] if "inIteration" in raw else word in ("running", "waiting"))
    return {
        "feature": paths.name,
        "featureDir": paths.dir,
        "archived": paths.is_archived,  # a completed (or `ralph archive`d) feature, read in .ralph/archive/
        "format": kind,
        "alive": alive,
        "pid": holder or status.get("pid") if alive else None,
        "status": word,
        "exitReason": status.get("exitReason"),
        "exitMessage": status.get("exitMessage"),
        **_numbers(status, state, alive and word in ("running", "waiting"), older="iterationsCounted" not in raw),
        "inIteration": in_iteration,
        "maxIterations": status.get("maxIterations"),
        "totalIterations": state.get("iteration", status.get("totalIterations", 0)),
        "storiesComplete": done,
        "storiesTotal": total,
        "currentStory": status.get("currentStory") or state.get("current_story") or state.get("current_task") or None,
        "lastOutcome": state.get("last_outcome"),
        "lastUpdated": status.get("lastUpdated"),
        "logFile": status.get("logFile") or None,
        "lastSignals": status.get("lastSignals") or [],
        "confidence": status.get("confidence"),
        "refusedClaim": status.get("refusedClaim"),
        "blockedReason": status.get("blockedReason"),
        "blockedLoops": status.get("blockedLoops", 0),
        "testOnlyLoops": status.get("testOnlyLoops", 0),
        "questionLoops": status.get("questionLoops", 0),
        "circuitState": circuit.get("state", "CLOSED"),
        "circuitReason": circuit.get("reason") or None,
        "apiCallsUsed": status.get("apiCallsUsed", 0),
        "apiCallsLimit": status.get("apiCallsLimit"),
        "rateLimitResetsAt": status.get("rateLimitResetsAt"),
        "retryCount": status.get("retryCount", 0),
        "maxRetries": status.get("maxRetries"),
        "waiting": status.get("waiting") if alive else None,
        "usageLimit": status.get("usageLimit"),
        "costUsd": status.get("costUsd"),
        "tokensUsed": status.get("tokensUsed"),
        "tokens": status.get("tokens") if isinstance(status.get("tokens"), dict) else None,
        "lastMessage": status.get("lastMessage"),
        "scope": status.get("scope"),
        # prd.json is read afresh (the feature's counts); the other formats' counts are the last run's scope
        "countsScope": status.get("scope") or None if kind is None or not format_of(kind).counts else None,
        "model": status.get("model"),
        "agent": status.get("agent") or None,
        "activity": status.get("activity") if alive else None,
        "guidance": None if reset_since else status.get("guidance"),
        "note": "; ".join(part for part in (note, torn) if part) or None,
        "circuitResetSince": reset_since,
        # the header's numbers (words/pace.py words them): the run's start, its pace, budgets and the iteration's clock
        "startedAt": status.get("startedAt"),
        **_pace(status),
        "iterationStartedAt": status.get("iterationStartedAt") if in_iteration else None,
        "iterationTimeoutS": status.get("iterationTimeoutS"),
        "lastOutputAt": status.get("lastOutputAt") if in_iteration else None,
        "maxCostUsd": status.get("maxCostUsd"),
        "maxTokens": status.get("maxTokens"),
        "maxRuntimeS": status.get("maxRuntimeS"),
        "durationS": status.get("durationS"),
        # issue 34: each window of the run's accounts, from the book every loop writes (its share, reset and cap)
        **dict(zip(("windows", "windowsNote"), account_windows(status.get("pacing")), strict=True)),
    }


def _pace(status: dict[str, Any]) -> dict[str, int | None]:
    """Tasks done this run and left, from the run's own counts (a narrowed run counts its scope), for the ETA;
    None from a status.json that does not say how many were done when the run began."""
    at_start, done, total = status.get("storiesAtStart"), status["storiesComplete"], status["storiesTotal"]
    if at_start is None:
        return {"storiesDoneThisRun": None, "storiesLeft": None}
    return {"storiesDoneThisRun": max(0, done - at_start), "storiesLeft": max(0, total - done)}


def _numbers(status: dict[str, Any], state: dict[str, Any], running: bool, *, older: bool) -> dict[str, int]:
    """The iteration's number, this run's counted iterations and uncounted calls. A status.json of an `older`
    ralph counted `iteration` within the run (the one going on included) and numbered it `totalIterations`."""
    if not older:
        counted, uncounted = _count(status.get("iterationsCounted")), _count(status.get("callsNotCounted"))
        number = _count(status.get("iteration"))
    else:
        counted, uncounted = max(0, _count(status.get("iteration")) - running), 0
        number = _count(status.get("totalIterations")) or _count(status.get("iteration"))
    number = max(number, _count(state.get("iteration")))
    return {"iteration": number, "iterationsCounted": counted, "callsNotCounted": uncounted}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
