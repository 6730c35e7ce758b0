"""`ralph status [-f F] [--json]`: where a feature's loop stands, read from its files alone.

Kept light on purpose (json, os, fcntl): it is what scripts and prompts poll.
"""

from __future__ import annotations

import json

from ralphloop.errors import RalphError
from ralphloop.paths import FeaturePaths, find_project_root, resolve_feature
from ralphloop.state.read import lock_holder_alive, read_json_object
from ralphloop.tasks.detect import detect
from ralphloop.textsafe import strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


_COUNTED = {
    "prd": "Stories:    {} / {} pass",
    "stories": "Stories:    {} / {} done",
    "goal": "Steps:      {} / {} done (the goal itself included)",
}


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature)
    report = gather(paths)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render(report))
    return 0


def story_counts(paths: FeaturePaths) -> tuple[int, int]:
    """Stories passing and in total, from prd.json itself (the truth, even if edited by hand)."""
    try:
        with open(paths.prd, "rb") as handle:
            prd = json.loads(handle.read())
        stories = prd["userStories"]
        return sum(1 for story in stories if story.get("passes") is True), len(stories)
    except FileNotFoundError:
        raise RalphError(f"{paths.display()}/prd.json: file not found") from None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise RalphError(f"{paths.display()}/prd.json: not a valid prd.json ({type(exc).__name__})") from None


def task_counts(paths: FeaturePaths, kind: str | None, status: dict[str, Any]) -> tuple[int, int]:
    """Tasks done and in total: prd.json read afresh; the other formats as the last iteration counted them
    (reading Markdown or YAML here would cost `ralph status` its speed)."""
    if kind == "prd":
        return story_counts(paths)
    done, total = status.get("storiesComplete", 0), status.get("storiesTotal", 0)
    return (done, total) if isinstance(done, int) and isinstance(total, int) else (0, 0)


def gather(paths: FeaturePaths, *, strict: bool = True) -> dict[str, Any]:
    """The report of `ralph status --json`. Not `strict` (the monitor): a prd.json missing or broken
    mid-run gives the counts status.json last wrote instead of an error."""
    status = read_json_object(paths.status) or {}
    kind = detect(paths.dir)
    try:
        done, total = task_counts(paths, kind, status)
    except RalphError:
        if strict:
            raise
        done, total = task_counts(paths, None, status)
    state = read_json_object(paths.state) or {}
    # The breaker's own file is the truth: `ralph reset-circuit` rewrites it without touching status.json.
    circuit = read_json_object(paths.circuit_state) or {}
    reset_since = status.get("exitReason") == "circuit_open" and circuit.get("state") == "CLOSED"
    holder = lock_holder_alive(paths.lock)
    alive = holder is not None
    word = status.get("status") or "not started"
    note = None
    if word in ("running", "starting") and not alive:
        word = "stopped"
        note = "the last run ended without writing its final state (killed?)"
    return {
        "feature": paths.name,
        "featureDir": paths.dir,
        "format": kind,
        "alive": alive,
        "pid": holder or status.get("pid") if alive else None,
        "status": word,
        "exitReason": status.get("exitReason"),
        "exitMessage": status.get("exitMessage"),
        "iteration": status.get("iteration", 0),
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
        "model": status.get("model"),
        "activity": status.get("activity") if alive else None,
        "guidance": None if reset_since else status.get("guidance"),
        "note": note,
    }


def render(report: dict[str, Any]) -> str:
    done, total = report["storiesComplete"], report["storiesTotal"]
    filled = round(10 * done / total) if total else 0
    run = f"running (PID {report['pid']})" if report["alive"] else "not running"
    limit = report["maxIterations"]
    lines = [
        f"Feature:    {report['feature']}  ({report['featureDir']})",
        f"Run:        {run}",
        f"Status:     {report['status']}"
        + (f" ({report['exitReason']})" if report["exitReason"] not in (None, report["status"]) else ""),
        f"Iteration:  {report['iteration']} / {limit if limit else 'unlimited'}"
        f"  ({report['totalIterations']} in all runs)",
        f"{_COUNTED.get(report.get('format') or 'prd', 'Tasks:      {} / {} done')}".format(done, total)
        + f"  [{'#' * filled}{'-' * (10 - filled)}]",
    ]
    if report["currentStory"]:
        lines.append(f"Current:    {report['currentStory']}")
    if report["activity"]:
        lines.append(f"Doing:      {strip_terminal_controls(str(report['activity']))}")
    last = report["lastOutcome"]
    if isinstance(last, dict):
        error = f" - {last.get('error')}" if last.get("error") else ""
        lines.append(
            f"Last:       iteration {last.get('iteration')}: {last.get('status')} ({last.get('task_id')}){error}"
        )
    if report["lastSignals"]:
        lines.append(f"Signals:    {', '.join(map(str, report['lastSignals']))}  (confidence {report['confidence']})")
    if report["refusedClaim"]:
        lines.append(f"Refused:    completion claim: {strip_terminal_controls(str(report['refusedClaim']))}")
    if report["blockedReason"]:
        reason = strip_terminal_controls(str(report["blockedReason"]))
        lines.append(f"Blocked:    {reason}  ({report['blockedLoops']} in a row)")
    streaks = [(report["testOnlyLoops"], "test-only"), (report["questionLoops"], "questions only")]
    for count, what in streaks:
        if isinstance(count, int) and count > 0:
            lines.append(f"Evidence:   {count} {what} iteration(s) in a row")
    circuit = str(report["circuitState"])
    if circuit != "CLOSED" or report["circuitReason"]:
        reason = f" - {strip_terminal_controls(str(report['circuitReason']))}" if report["circuitReason"] else ""
        lines.append(f"Circuit:    {circuit}{reason}")
    if report["apiCallsLimit"]:
        resets = f", a slot frees at {report['rateLimitResetsAt']}" if report["rateLimitResetsAt"] else ""
        lines.append(f"Calls:      {report['apiCallsUsed']}/{report['apiCallsLimit']} in the last hour{resets}")
    if isinstance(report["retryCount"], int) and report["retryCount"] > 0:
        lines.append(
            f"Retries:    {report['retryCount']} failed attempt(s) of {report['maxRetries']} at the current story"
        )
    waiting = report["waiting"]
    if isinstance(waiting, dict):
        lines.append(f"Waiting:    {strip_terminal_controls(str(waiting.get('message')))} until {waiting.get('until')}")
    limit_hit = report["usageLimit"]
    if isinstance(limit_hit, dict):
        message = strip_terminal_controls(str(limit_hit.get("message")))
        lines.append(f"Usage:      {message} (resets {limit_hit.get('resetsAt') or 'at an unknown time'})")
    if report["costUsd"] is not None or report["tokensUsed"] is not None:
        model = f" ({strip_terminal_controls(str(report['model']))})" if report["model"] else ""
        lines.append(
            f"Spent:      ${report['costUsd'] or 0:.2f}, {report['tokensUsed'] or 0:,} tokens (last run){model}"
        )
    if report["exitMessage"]:
        lines.append(f"Ended:      {strip_terminal_controls(str(report['exitMessage']))}")
    if report["lastUpdated"]:
        lines.append(f"Updated:    {report['lastUpdated']}")
    if report["guidance"]:
        lines += [strip_terminal_controls(str(line)) for line in str(report["guidance"]).splitlines()]
    if report["note"]:
        lines.append(f"Note:       {report['note']}")
    return "\n".join(lines)
