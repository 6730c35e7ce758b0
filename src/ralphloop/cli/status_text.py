"""`ralph status` for a person: the report (state/report.py) in lines, times in the local zone, and a parallel
run's fleet; every value cleaned of escapes (the agent can write the state files)."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime

from ralphloop.plugins.formats import format_of
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.words.figures import iteration_words, tokens_words
from ralphloop.words.fleet import fleet_lines
from ralphloop.words.pace import (
    calls_full,
    cost_words,
    elapsed_words,
    eta_words,
    iteration_clock,
    last_output_words,
    local_when,
    parse_time,
    rough,
    seconds_between,
    token_budget_words,
)
from ralphloop.words.textsafe import strip_terminal_controls
from ralphloop.words.windows import window_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def status_text(
    report: dict[str, Any], fleet: dict[str, Any] | None, fleet_note: str | None, paths: FeaturePaths
) -> str:
    """What `ralph status` prints: the feature's lines (or, when its last run was parallel, the fleet's head), the
    fleet's block and its note."""
    now = datetime.now(UTC)
    if fleet is not None and _parallel_is_last(report, fleet):  # the single loop's lines would be of no run
        text = strip_terminal_controls("\n".join(_parallel_head(report, fleet)))
    else:
        text = render(report, now, paths.flag)
    if fleet is not None:
        text += "\n" + render_fleet(fleet, now, paths, _width())
    if fleet_note:
        text += "\n" + strip_terminal_controls(f"Note:       {fleet_note}")
    return text


def _parallel_is_last(report: dict[str, Any], fleet: dict[str, Any]) -> bool:
    """Whether the feature's last run was the parallel one (its own status.json is older, or there is none)."""
    single, parallel = report.get("startedAt"), fleet.get("startedAt")
    return not isinstance(single, str) or (isinstance(parallel, str) and parallel >= single)


def _parallel_head(report: dict[str, Any], fleet: dict[str, Any]) -> list[str]:
    """The feature's lines when its last run was parallel: the stories merged where the queue put them, and
    how many pass in this worktree's own task file when that differs (until the work is brought in)."""
    merged, total = fleet["storiesMerged"], fleet["storiesTotal"]
    stories = f"Stories:    {merged} / {total} merged into {fleet['target']}"
    here = (report["storiesComplete"], report["storiesTotal"])
    if here != (merged, total):
        stories += f" ({here[0]} / {here[1]} pass in this worktree's task file)"
    return [f"Feature:    {report['feature']}  ({report['featureDir']})", stories]


def render_fleet(fleet: dict[str, Any], now: datetime, paths: FeaturePaths, width: int | None) -> str:
    """The Fleet block of a parallel run (fleet_words.fleet_lines), its failed loops' worktrees looked up on disk."""
    adopt = paths.command("run", "--parallel", str(fleet.get("parallel") or 1))
    kept = {
        loop["worktree"]
        for loop in fleet["loops"]
        if loop["state"] == "failed" and loop["worktree"] and os.path.isdir(loop["worktree"])
    }
    return strip_terminal_controls("\n".join(fleet_lines(fleet, now, adopt, kept=kept, width=width)))


def _width() -> int | None:
    """The columns a row may take: COLUMNS, else the terminal's; None on a pipe (rows whole, for a script)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0 and sys.stdout.isatty():
        try:
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError):
            columns = 0
    return columns if columns > 0 else None


def _where(report: dict[str, Any]) -> str:
    """The feature's folder, and that it is archived when it is (nothing active is left to show)."""
    if report.get("archived"):
        return f"archived in {display_path(report['featureDir'], os.getcwd())}"
    return str(report["featureDir"])


def render(report: dict[str, Any], now: datetime, flag: str = "") -> str:
    """The report as lines for a person, times in the local zone; every value may come from the agent (it can
    write the state files), so the whole text is cleaned of escape sequences and control characters, not field
    by field. `flag`: the `-f` words the commands it names need (FeaturePaths.flag)."""
    return strip_terminal_controls("\n".join(_lines(report, now, flag)))


def _lines(report: dict[str, Any], now: datetime, flag: str) -> list[str]:
    done, total = report["storiesComplete"], report["storiesTotal"]
    filled = round(10 * done / total) if total else 0
    run = f"running (PID {report['pid']})" if report["alive"] else "not running"
    limit = report["maxIterations"]
    lines = [
        f"Feature:    {report['feature']}  ({_where(report)})",
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
        )
        + _clock(report, now),
        _not_counted(report, flag)
        or format_of(report.get("format")).status_words.format(done, total)
        + f"  [{'#' * filled}{'-' * (10 - filled)}]"
        + (
            f"  ({strip_terminal_controls(str(report['countsScope']))} only: the last run was narrowed)"
            if report.get("countsScope")
            else ""
        )
        + (f"  {eta_words(report, now)}" if eta_words(report, now) else ""),
    ]
    if report["alive"] and elapsed_words(report, now):
        lines.append(f"Elapsed:    {elapsed_words(report, now)}")
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
        frees = local_when(parse_time(report["rateLimitResetsAt"]), now)
        resets = f", all used: a slot frees at {frees}" if frees and calls_full(report) else ""
        lines.append(f"Calls:      {report['apiCallsUsed']}/{report['apiCallsLimit']} in the last hour{resets}")
    if isinstance(report["retryCount"], int) and report["retryCount"] > 0:
        lines.append(
            f"Retries:    {report['retryCount']} failed attempt(s) of {report['maxRetries']} at the current story"
        )
    lines += _later_lines(report, now)
    return lines


def _clock(report: dict[str, Any], now: datetime) -> str:
    """ " · 03:12 of 30:00 · last output 40s ago": the iteration going on."""
    parts = [part for part in (iteration_clock(report, now), last_output_words(report, now)) if part]
    return "".join(f" · {part}" for part in parts)


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


def _later_lines(report: dict[str, Any], now: datetime) -> list[str]:
    """Waits, limits, spend, how the run ended and what to do next."""
    lines: list[str] = []
    waiting = report["waiting"]
    if isinstance(waiting, dict):
        until = local_when(parse_time(waiting.get("until")), now) or "an unknown time"
        message = strip_terminal_controls(str(waiting.get("message")))
        asked = waiting.get("kind") == "answer" and "your answer" not in message
        what = f"{message}: your answer" if asked else message
        if waiting.get("kind") == "paused":  # no end of its own: until the user resumes (core/steering.PAUSED)
            lines.append(f"Paused:     {message}")
        else:
            lines.append(f"Waiting:    {what} until {until}")
    limit_hit = report["usageLimit"]
    if isinstance(limit_hit, dict):
        message = strip_terminal_controls(str(limit_hit.get("message")))
        vendor = strip_terminal_controls(str(limit_hit.get("vendor") or "")) or "the agent"
        when = local_when(parse_time(limit_hit.get("resetsAt")), now) or "at an unknown time"
        lines.append(f"Usage:      the last limit, {vendor}'s: {message} (resets {when})")
    for window in report.get("windows") or ():  # the run's accounts' usage windows, as the book has them
        lines.append(f"Window:     {window_line(window, now)}")
    if report.get("windowsNote"):
        lines.append(f"Windows:    not read ({strip_terminal_controls(str(report['windowsNote']))})")
    tokens = report["tokens"] or {}
    spent = tokens_words(tokens.get("inputTokens"), tokens.get("outputTokens"), tokens.get("cacheReadTokens"))
    budget = token_budget_words(report)
    cost = cost_words(report, now)
    if cost or spent:
        model = f" ({strip_terminal_controls(str(report['model']))})" if report["model"] else ""
        tokens_said = (spent or "tokens not reported") + (f" · {budget}" if budget else "")
        lines.append(f"Spent:      {cost or 'cost not reported'}, {tokens_said} (this run){model}")
    if report["exitMessage"]:
        lines.append(f"Ended:      {strip_terminal_controls(str(report['exitMessage']))}")
    if report["lastMessage"]:
        lines.append(f"Agent said: {strip_terminal_controls(str(report['lastMessage']))}")
    updated = parse_time(report["lastUpdated"])
    when = local_when(updated, now) if updated is not None else ""  # "" out of range: no line saying nothing
    if updated is not None and when and not report["alive"]:  # a live run rewrites it often: an ended run's is news
        ago = seconds_between(updated, now)
        lines.append(f"Updated:    {when}" + (f" ({rough(ago)} ago)" if ago is not None and ago >= 1 else ""))
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
