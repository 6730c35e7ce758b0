"""`ralph status [-f F] [--json]`: where a feature's loop stands, read from its files alone.

Kept light on purpose (json, os, fcntl): it is what scripts and prompts poll.
"""

from __future__ import annotations

import json

from ralphloop.numbers import iteration_words, tokens_words
from ralphloop.paths import find_project_root, resolve_feature
from ralphloop.state.report import gather
from ralphloop.tasks.formats import format_of
from ralphloop.textsafe import json_for_terminal, strip_terminal_controls

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def command(args: argparse.Namespace, argv: list[str]) -> int:
    paths = resolve_feature(find_project_root(), args.feature)
    report = gather(paths)
    if args.json:
        print(json_for_terminal(json.dumps(report, indent=2, ensure_ascii=False)))
    else:
        print(render(report, paths.flag))
    return 0


def render(report: dict[str, Any], flag: str = "") -> str:
    """The report as lines for a person; every value may come from the agent (it can write the state files),
    so the whole text is cleaned of escape sequences and control characters, not field by field. `flag`: the
    `-f` words the commands it names need (FeaturePaths.flag)."""
    return strip_terminal_controls("\n".join(_lines(report, flag)))


def _lines(report: dict[str, Any], flag: str) -> list[str]:
    done, total = report["storiesComplete"], report["storiesTotal"]
    filled = round(10 * done / total) if total else 0
    run = f"running (PID {report['pid']})" if report["alive"] else "not running"
    limit = report["maxIterations"]
    lines = [
        f"Feature:    {report['feature']}  ({report['featureDir']})",
        f"Run:        {run}",
        f"Status:     {report['status']}" + _why(report),
        "Iteration:  "
        + (
            _before_any_run(report)
            if report["status"] == "not started"
            else iteration_words(
                report["iteration"],
                report["iterationsCounted"],
                report["callsNotCounted"],
                limit,
                running=report["inIteration"],
            )
        ),
        _not_counted(report, flag)
        or format_of(report.get("format")).status_words.format(done, total)
        + f"  [{'#' * filled}{'-' * (10 - filled)}]"
        + (
            f"  ({strip_terminal_controls(str(report['countsScope']))} only: the last run was narrowed)"
            if report.get("countsScope")
            else ""
        ),
    ]
    if report.get("agent") and report["status"] != "not started":
        lines.append(f"Agent:      {report['agent']}{_shares(report)}")
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
    lines += _later_lines(report)
    return lines


def _shares(report: dict[str, Any]) -> str:
    """With failover, each agent's calls this run: "  (this run: claude 1 call, codex 3 calls)"."""
    shares = (report["tokens"] or {}).get("byAgent")
    if not isinstance(shares, list) or not shares:
        return ""
    said = [
        f"{share.get('agent')} {share.get('calls')} call{'s' if share.get('calls') != 1 else ''}"
        for share in shares
        if isinstance(share, dict)
    ]
    return f"  (this run: {', '.join(said)})"


def unknown_cost(tokens: dict[str, Any]) -> str:
    """ " + the cost of 3 calls not reported": what a cost total leaves out (an agent without a price)."""
    missing = tokens.get("callsWithoutCost")
    if not isinstance(missing, int) or isinstance(missing, bool) or missing <= 0:
        return ""
    return f" + the cost of {missing:,} call{'s' if missing != 1 else ''} not reported"


def _later_lines(report: dict[str, Any]) -> list[str]:
    """Waits, limits, spend, how the run ended and what to do next."""
    lines: list[str] = []
    waiting = report["waiting"]
    if isinstance(waiting, dict):
        lines.append(f"Waiting:    {strip_terminal_controls(str(waiting.get('message')))} until {waiting.get('until')}")
    limit_hit = report["usageLimit"]
    if isinstance(limit_hit, dict):
        message = strip_terminal_controls(str(limit_hit.get("message")))
        vendor = strip_terminal_controls(str(limit_hit.get("vendor") or "")) or "the agent"
        when = limit_hit.get("resetsAt") or "at an unknown time"
        lines.append(f"Usage:      the last limit, {vendor}'s: {message} (resets {when})")
    tokens = report["tokens"] or {}
    spent = tokens_words(tokens.get("inputTokens"), tokens.get("outputTokens"), tokens.get("cacheReadTokens"))
    if report["costUsd"] is not None or spent:
        model = f" ({strip_terminal_controls(str(report['model']))})" if report["model"] else ""
        cost = f"${report['costUsd']:.2f}" if isinstance(report["costUsd"], int | float) else "cost not reported"
        cost += unknown_cost(tokens)
        lines.append(f"Spent:      {cost}, {spent or 'tokens not reported'} (this run){model}")
    if report["exitMessage"]:
        lines.append(f"Ended:      {strip_terminal_controls(str(report['exitMessage']))}")
    if report["lastMessage"]:
        lines.append(f"Agent said: {strip_terminal_controls(str(report['lastMessage']))}")
    if report["lastUpdated"]:
        lines.append(f"Updated:    {report['lastUpdated']}")
    if report["guidance"]:
        lines += [strip_terminal_controls(str(line)) for line in str(report["guidance"]).splitlines()]
    if report["note"]:
        lines.append(f"Note:       {report['note']}")
    return lines


def _not_counted(report: dict[str, Any], flag: str) -> str:
    """Before any run only prd.json is counted here (reading Markdown or YAML would cost `status` its speed):
    the other formats say so rather than show 0 / 0."""
    if report["status"] != "not started" or report.get("format") in (None, "prd") or report["storiesTotal"]:
        return ""
    units = format_of(report.get("format")).units
    named = f" {flag}" if flag else ""
    checks = f"checked by: ralph validate{named}; the next prompt: ralph run -d{named}"
    return f"{units + ':':<12}not counted before the first run ({checks})"


def _before_any_run(report: dict[str, Any]) -> str:
    """No run yet, so no limit of its own: what a run would do when nothing says otherwise (the config may)."""
    limit = format_of(report.get("format")).default_max_iterations
    would = f"up to {limit} iterations" if limit else "until complete"
    return f"0 · no run yet (a run goes {would} unless -n or defaults.max_iterations says otherwise)"


def _why(report: dict[str, Any]) -> str:
    """The exit reason beside the status word, when it says more."""
    if report.get("circuitResetSince"):
        return " (stopped on an open circuit, reset since: run again to go on)"
    reason = report["exitReason"]
    return f" ({reason})" if reason not in (None, report["status"]) else ""
