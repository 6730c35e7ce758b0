"""ralph_metrics.jsonl (seed 004): one JSON object per finished iteration, and the summary of them.

The engine appends a line per iteration; `ralph report` reads them back. Stdlib json only, and no
typing or protocols at run time: `ralph report` imports this and must stay as light as `ralph status`.

Unknown is not zero: when an agent reports no token counts (a plain command), the usage values are
null in the file, "not reported" on screen, and left out of the token averages.
"""

from __future__ import annotations

import gc
import json
import os
from dataclasses import dataclass

from ralphloop.errors import RalphError
from ralphloop.textsafe import clean_text

TYPE_CHECKING = False  # typing costs ~9 ms of import; `ralph report` must stay fast
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from ralphloop.protocols import AgentResult

METRICS_NAME = "ralph_metrics.jsonl"
SCHEMA_VERSION = 1

# The iteration's status word, as the loop decides it.
OUTCOMES = ("complete", "in-progress", "failed", "refused", "blocked", "interrupted", "usage-limit", "api-error")
_UNCOUNTED = ("interrupted", "usage-limit", "api-error")  # lines written before `counted` was: their outcome tells
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "total_tokens")

RULE = "=" * 50
NOT_REPORTED = "not reported"  # the agent did not say (unknown, never zero)
NOT_APPLICABLE = "N/A"  # nothing to compute it from (a rate over zero)

_INT = (int,)
_NUMBER = (int, float)
_TEXT = (str,)
_BOOL = (bool,)
# key, the JSON types it may have (besides null), and whether null or missing is an error.
_FIELDS: tuple[tuple[str, tuple[type, ...], bool], ...] = (
    ("iteration", _INT, True),
    ("timestamp", _TEXT, False),
    ("duration_seconds", _NUMBER, True),
    ("model", _TEXT, False),
    ("stop_reason", _TEXT, False),
    ("usage", (dict,), False),
    ("files_changed", _INT, False),
    ("success", _BOOL, True),
    ("exit_code", _INT, False),
    ("cost_usd", _NUMBER, False),
    ("num_turns", _INT, False),
    ("session_id", _TEXT, False),
    ("task_id", _TEXT, False),
    ("outcome", _TEXT, False),
    ("agent", _TEXT, False),
    ("counted", _BOOL, False),
)
_FIELD_KEYS = tuple(key for key, _, _ in _FIELDS)
_JSON_KIND = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number"}
_JSON_KIND.update({bool: "a boolean", type(None): "null"})

# ---------------------------------------------------------------- writing


def is_success(result: AgentResult) -> bool:
    """Seed 004's `success`: the run neither failed, nor was interrupted, nor hit a usage limit."""
    return not result.failed and not result.interrupted and result.usage_limit is None


def metrics_line(
    *,
    iteration: int,
    timestamp: str,
    task_id: str,
    outcome: str,
    agent: str,
    result: AgentResult,
    files_changed: int,
    counted: bool = True,
    success: bool | None = None,
) -> dict[str, Any]:
    """One line of ralph_metrics.jsonl: seed 004's fields in its order, then ralph's own.

    `outcome` is the iteration's status word (see OUTCOMES); `success` the loop's verdict (accepted work
    that moved the task state), else what the agent's run alone says. `counted`: whether it counts toward
    max_iterations (a usage limit, an API retry or a wrong model does not). When the agent reported no
    usage, every usage value is null: unknown, not zero.
    """
    usage = result.usage
    tokens: dict[str, int | None]
    if usage is None:
        tokens = dict.fromkeys(USAGE_KEYS)
    else:
        tokens = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_tokens": usage.cache_creation_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "total_tokens": usage.total,
        }
    return {
        "iteration": iteration,
        "timestamp": timestamp,
        "duration_seconds": round(max(0.0, result.duration_s), 1),
        "model": result.model,
        "stop_reason": result.stop_reason,
        "usage": tokens,
        "files_changed": files_changed,
        "success": success if success is not None else is_success(result) and outcome == "complete",
        "exit_code": result.exit_code,
        "cost_usd": result.cost_usd,
        "num_turns": result.num_turns,
        "session_id": result.session_id,
        "task_id": task_id,
        "outcome": outcome,
        "agent": agent,
        "counted": counted,
    }


def append_metrics(path: str | os.PathLike[str], line: Mapping[str, Any]) -> None:
    """Append `line` as one compact JSON line, in a single fsynced write.

    When the file does not end with a newline (a crash cut its last line), a newline comes first,
    so that the new line is whole; `read_metrics` skips the cut one.
    """
    from ralphloop.state.store import append_text  # tempfile and fcntl: only the writer pays for them

    text = json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"
    try:
        with open(path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                text = "\n" + text
    except OSError:  # no file yet, or an empty one (seeking before the start)
        pass
    append_text(path, text)


# ---------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class MetricsRead:
    """The lines of a metrics file, and those skipped as cut short by a crash: (line number, why)."""

    lines: list[dict[str, Any]]
    skipped: list[tuple[int, str]]


def read_metrics(path: str | os.PathLike[str]) -> MetricsRead:
    """Every line of the metrics file at `path`, checked; errors name `path` as given, with the line.

    Tolerated, and listed in `skipped`: a last line that is not valid JSON and has no newline (a crash
    mid-write), and a line elsewhere that is the start of a JSON object cut short (such a line, once
    `append_metrics` wrote after it). Blank lines are ignored. Anything else that is not a metrics
    line (not JSON, not an object, a field of the wrong type) raises RalphError.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise RalphError(f"{name}: no metrics yet (no iteration has finished)") from None
    except OSError as exc:
        raise RalphError(f"{name}: cannot read ({exc.strerror or exc})") from None
    rows = data.split(b"\n")
    tail = rows.pop()  # what follows the last newline: empty unless the last line is unterminated
    lines: list[dict[str, Any]] = []
    skipped: list[tuple[int, str]] = []
    known: set[object] = set()  # field-type patterns already checked: most files repeat one or two
    loads = json.loads
    collecting = gc.isenabled()
    gc.disable()  # JSON values hold no cycles: collecting while 100k lines pile up is wasted time (~20%)
    try:
        for number, row in enumerate(rows, start=1):
            try:
                value = loads(row)
            except ValueError as exc:
                if not row.strip():
                    continue
                if not _looks_cut(row):
                    raise RalphError(f"{name}:{number}: not valid JSON ({_json_error(exc)})") from None
                skipped.append((number, "an unfinished line (cut short by a crash?)"))
                continue
            lines.append(_checked(value, name, number, known))
    finally:
        if collecting:
            gc.enable()
    if tail.strip():
        number = len(rows) + 1
        try:
            value = loads(tail)
        except ValueError:
            skipped.append((number, "an unfinished last line (cut short by a crash?)"))
        else:
            lines.append(_checked(value, name, number, known))
    return MetricsRead(lines, skipped)


def _checked(value: object, name: str, number: int, known: set[object]) -> dict[str, Any]:
    if type(value) is not dict:
        raise RalphError(f"{name}:{number}: not a metrics line ({_kind(value)}, not an object)")
    usage = value.get("usage")
    pattern = (
        tuple(map(type, map(value.get, _FIELD_KEYS))),
        tuple(map(type, map(usage.get, USAGE_KEYS))) if type(usage) is dict else None,
    )
    if pattern not in known:
        problem = _problem(value)
        if problem:
            raise RalphError(f"{name}:{number}: not a metrics line ({problem})")
        known.add(pattern)
    return value


def _problem(value: dict[str, Any]) -> str | None:
    """What is wrong with the fields of one line, or None."""
    for key, kinds, required in _FIELDS:
        field = value.get(key)
        if field is None:
            if required:
                return f'"{key}" is missing' if key not in value else f'"{key}" is null'
        elif type(field) not in kinds:
            return f'"{key}" is {_kind(field)}, expected {"a number" if kinds is _NUMBER else _JSON_KIND[kinds[0]]}'
    usage = value.get("usage")
    if usage is not None:
        for key in USAGE_KEYS:
            field = usage.get(key)
            if field is not None and type(field) is not int:
                return f'"usage.{key}" is {_kind(field)}, expected an integer'
    return None


def _kind(value: object) -> str:
    return _JSON_KIND.get(type(value), type(value).__name__)


def _json_error(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    return str(exc)


_PARTIAL_TOKEN = frozenset(("t", "tr", "tru", "f", "fa", "fal", "fals", "n", "nu", "nul"))


def _looks_cut(row: bytes) -> bool:
    """Whether `row` is the start of a JSON object that stops early, rather than a wrong line.

    NUL bytes at the end are crash debris too: after a power cut a file can keep its new length
    while the blocks of the last write were never written.
    """
    text = row.rstrip(b"\x00").decode("utf-8", errors="replace").strip()
    if not text:
        return b"\x00" in row
    if not text.startswith("{"):
        return False
    try:
        json.loads(text)
    except RecursionError:
        return False
    except json.JSONDecodeError as exc:
        if exc.msg.startswith(("Unterminated string", "Invalid \\uXXXX escape")):
            return True
        rest = text[exc.pos :]
        # The decoder stops at the end, or at a token the cut left unfinished: `tr`, `nul`, `1.`, `2e-`, `-`.
        return not rest or rest in _PARTIAL_TOKEN or all(char in "0123456789+-.eE" for char in rest)
    return False


# ---------------------------------------------------------------- summary


@dataclass(frozen=True, slots=True)
class Summary:
    """Totals over metrics lines. Token figures cover only the `token_iterations` lines that reported
    tokens, cost figures the `cost_iterations` that reported a cost; None means nothing to report."""

    iterations: int  # counted ones
    max_iterations: int | None
    successes: int  # of the counted ones
    success_rate: float | None  # percent of the counted ones
    duration_total_s: float
    duration_avg_s: float | None
    duration_min_s: float | None
    duration_max_s: float | None
    token_iterations: int
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None  # input + output, as seed 004 counts it
    tokens_avg: float | None
    cache_creation_tokens: int | None
    cache_read_tokens: int | None
    cache_hit_rate: float | None  # percent of prompt tokens read from the cache
    cost_iterations: int
    cost_usd: float | None
    cost_avg_usd: float | None
    files_iterations: int
    files_changed: int | None
    files_avg: float | None
    outcomes: tuple[tuple[str, int], ...]  # (status word, count), most frequent first
    models: tuple[str, ...]  # in the order first seen
    uncounted: int = 0  # agent calls that did not count: usage limit, API retry, wrong model, interrupted

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object, rounded for people (0.1 s, 0.1 %, 0.1 token, 1e-6 USD)."""
        return {
            "iterations": self.iterations,
            "calls_not_counted": self.uncounted,
            "max_iterations": self.max_iterations,
            "successes": self.successes,
            "success_rate": _round(self.success_rate, 1),
            "duration_seconds": {
                "total": _round(self.duration_total_s, 1),
                "average": _round(self.duration_avg_s, 1),
                "min": _round(self.duration_min_s, 1),
                "max": _round(self.duration_max_s, 1),
            },
            "tokens": {
                "iterations_reported": self.token_iterations,
                "input": self.input_tokens,
                "output": self.output_tokens,
                "total": self.total_tokens,
                "average": _round(self.tokens_avg, 1),
                "cache_creation": self.cache_creation_tokens,
                "cache_read": self.cache_read_tokens,
                "cache_hit_rate": _round(self.cache_hit_rate, 1),
            },
            "cost_usd": {
                "iterations_reported": self.cost_iterations,
                "total": _round(self.cost_usd, 6),
                "average": _round(self.cost_avg_usd, 6),
            },
            "files_changed": {
                "iterations_reported": self.files_iterations,
                "total": self.files_changed,
                "average": _round(self.files_avg, 1),
            },
            "outcomes": dict(self.outcomes),
            "models": list(self.models),
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def cache_hit_rate(input_tokens: int, cache_creation_tokens: int, cache_read_tokens: int) -> float | None:
    """The percentage of prompt tokens served from the cache: read / (input + created + read).

    Not seed 004's read / input: the Anthropic API's `input_tokens` counts only the prompt tokens that
    were neither read from nor written to the cache, so the seed's ratio is not a share and passes
    100% whenever most of the prompt is cached (10,000 read over 2,000 input would be "500%"). The
    three kinds together are the whole prompt. None when there were no prompt tokens.
    """
    prompt = input_tokens + cache_creation_tokens + cache_read_tokens
    return None if prompt <= 0 else 100.0 * cache_read_tokens / prompt


def _tokens(line: Mapping[str, Any]) -> tuple[int, int, int, int] | None:
    """(input, output, cache created, cache read) when the line reported tokens, else None."""
    usage = line.get("usage")
    if not isinstance(usage, dict):
        return None
    given, made = usage.get("input_tokens"), usage.get("output_tokens")
    if not isinstance(given, int) or not isinstance(made, int):
        return None
    created, read = usage.get("cache_creation_tokens"), usage.get("cache_read_tokens")
    return given, made, created if isinstance(created, int) else 0, read if isinstance(read, int) else 0


def summarize(lines: Iterable[Mapping[str, Any]], *, max_iterations: int | None = None) -> Summary:
    """The totals, averages and rates of `lines` (as `read_metrics` returns them)."""
    iterations = successes = uncounted = 0
    durations: list[float] = []
    token_iterations = given = made = created = read = 0
    cost_iterations, cost = 0, 0.0
    files_iterations = files = 0
    outcomes: dict[str, int] = {}
    models: dict[str, None] = {}
    for line in lines:
        if is_counted(line):
            iterations += 1
            successes += line.get("success") is True
        else:
            uncounted += 1
        duration = line.get("duration_seconds")
        durations.append(float(duration) if isinstance(duration, (int, float)) else 0.0)
        counted = _tokens(line)
        if counted is not None:
            token_iterations += 1
            given += counted[0]
            made += counted[1]
            created += counted[2]
            read += counted[3]
        spent = line.get("cost_usd")
        if isinstance(spent, (int, float)) and not isinstance(spent, bool):
            cost_iterations += 1
            cost += spent
        changed = line.get("files_changed")
        if isinstance(changed, int) and not isinstance(changed, bool):
            files_iterations += 1
            files += changed
        word = line.get("outcome")
        word = word if isinstance(word, str) and word else "unknown"
        outcomes[word] = outcomes.get(word, 0) + 1
        model = line.get("model")
        if isinstance(model, str) and model:
            models[model] = None
    total_s = sum(durations)
    tokens = token_iterations > 0
    return Summary(
        iterations=iterations,
        max_iterations=max_iterations,
        successes=successes,
        success_rate=100.0 * successes / iterations if iterations else None,
        duration_total_s=total_s,
        duration_avg_s=total_s / len(durations) if durations else None,
        duration_min_s=min(durations) if durations else None,
        duration_max_s=max(durations) if durations else None,
        token_iterations=token_iterations,
        input_tokens=given if tokens else None,
        output_tokens=made if tokens else None,
        total_tokens=given + made if tokens else None,
        tokens_avg=(given + made) / token_iterations if tokens else None,
        cache_creation_tokens=created if tokens else None,
        cache_read_tokens=read if tokens else None,
        cache_hit_rate=cache_hit_rate(given, created, read) if tokens else None,
        cost_iterations=cost_iterations,
        cost_usd=cost if cost_iterations else None,
        cost_avg_usd=cost / cost_iterations if cost_iterations else None,
        files_iterations=files_iterations,
        files_changed=files if files_iterations else None,
        files_avg=files / files_iterations if files_iterations else None,
        outcomes=tuple(sorted(outcomes.items(), key=lambda item: (-item[1], item[0]))),
        models=tuple(models),
        uncounted=uncounted,
    )


def is_counted(line: Mapping[str, Any]) -> bool:
    """Whether a line counts as an iteration; lines from before `counted` was written say it by their outcome."""
    counted = line.get("counted")
    if isinstance(counted, bool):
        return counted
    return line.get("outcome") not in _UNCOUNTED


# ---------------------------------------------------------------- display


def clock(seconds: float) -> str:
    """Seed 004's durations, to the second: `0m 45s`, `7m 30s`, `1h 2m 5s`."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes}m {secs}s" if hours else f"{minutes}m {secs}s"


def percent(value: float | None) -> str:
    """`80%`, `36.4%`; never `100%` or `0%` for a share that is not all or nothing; `N/A` for None."""
    if value is None:
        return NOT_APPLICABLE
    if 0 < value < 0.05:
        return "<0.1%"
    if 99.95 <= value < 100:
        return ">99.9%"
    return f"{_decimal(value)}%"


def _decimal(value: float) -> str:
    """One decimal at most, digits grouped: `3`, `2.5`, `13,350`."""
    text = f"{value:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def _number(value: int | None, unit: str = "") -> str:
    if value is None:
        return NOT_REPORTED
    return f"{value:,}{unit}"


def _money(value: float | None) -> str:
    return NOT_REPORTED if value is None else f"${value:,.4f}"


def _files(value: float | None) -> str:
    if value is None:
        return NOT_REPORTED
    return f"{_decimal(value)} {'file' if value == 1 else 'files'}"


def _text(value: object) -> str:
    text = clean_text(value) if isinstance(value, str) else ""
    return text or NOT_REPORTED


def format_iteration(line: Mapping[str, Any]) -> str:
    """Seed 004's "Iteration Metrics" block for one line, with the cost added."""
    duration = line.get("duration_seconds")
    tokens = _tokens(line)
    lines = [
        "--- Iteration Metrics ---",
        f"Duration: {clock(duration) if isinstance(duration, (int, float)) else NOT_REPORTED}",
        f"Model: {_text(line.get('model'))}",
        f"Status: {_text(line.get('stop_reason'))}",
    ]
    if tokens is None:  # one line, not five saying the same: plain command agents report no tokens
        lines.append(f"Tokens: {NOT_REPORTED}")
    else:
        given, made, created, read = tokens
        lines += [
            f"Input tokens: {given:,}",
            f"Output tokens: {made:,}",
            f"Total tokens: {given + made:,}",
            f"Cache created: {created:,} tokens",
            f"Cache read: {read:,} tokens ({percent(cache_hit_rate(given, created, read))} hit rate)",
        ]
    cost = line.get("cost_usd")
    changed = line.get("files_changed")
    lines += [
        f"Cost: {_money(cost if isinstance(cost, (int, float)) else None)}",
        f"Files changed: {_number(changed if isinstance(changed, int) else None)}",
        f"Success: {'✓' if line.get('success') is True else '✗'}",
    ]
    return "\n".join(lines)


def _row(label: str, value: str) -> str:
    return f"  {label:<16} {value}"


def format_summary(summary: Summary, *, metrics_path: str | None = None) -> str:
    """Seed 004's "FINAL SUMMARY" block, with a Cost section; the log's path last, when given."""
    s = summary
    completed = f"{s.iterations:,}" + (f" / {s.max_iterations:,}" if s.max_iterations else "")
    lines = [RULE, "FINAL SUMMARY".center(len(RULE)).rstrip(), RULE, "", "Iterations:"]
    lines.append(_row("Completed:", completed))
    if s.uncounted:
        lines.append(
            _row(
                "Not counted:",
                f"{s.uncounted:,} agent call{'s' if s.uncounted != 1 else ''} "
                "(usage limit, API retry, wrong model, interrupted)",
            )
        )
    lines.append(_row("Success Rate:", percent(s.success_rate)))
    if s.outcomes:
        lines.append(_row("Outcomes:", ", ".join(f"{count:,} {word}" for word, count in s.outcomes)))
    if s.models:
        lines.append(_row("Models:", ", ".join(clean_text(model) for model in s.models)))

    def maybe(value: float | None, show: Callable[[float], str]) -> str:
        return NOT_APPLICABLE if value is None else show(value)

    lines += [
        "",
        "Duration:",
        _row("Total:", clock(s.duration_total_s)),
        _row("Average:", maybe(s.duration_avg_s, lambda v: f"{clock(v)} per iteration")),
        _row("Min:", maybe(s.duration_min_s, clock)),
        _row("Max:", maybe(s.duration_max_s, clock)),
    ]
    # An agent that reports no tokens or cost (a plain command) gets one line, not a page of "not reported".
    if s.token_iterations:
        average = _per(s.tokens_avg, lambda v: f"{_decimal(round(v))} tokens", s, s.token_iterations, "tokens")
        lines += [
            "",
            "Token Usage:",
            _row("Total Input:", _number(s.input_tokens, " tokens")),
            _row("Total Output:", _number(s.output_tokens, " tokens")),
            _row("Total:", _number(s.total_tokens, " tokens")),
            _row("Average:", average),
            "",
            "Cache Performance:",
            _row("Total Created:", _number(s.cache_creation_tokens, " tokens")),
            _row("Total Read:", _number(s.cache_read_tokens, " tokens")),
            _row("Overall Hit Rate:", percent(s.cache_hit_rate)),
        ]
    else:
        lines += ["", f"Token Usage:       {NOT_REPORTED} by the agent"]
    if s.cost_iterations:
        lines += [
            "",
            "Cost:",
            _row("Total:", _money(s.cost_usd)),
            _row("Average:", _per(s.cost_avg_usd, _money, s, s.cost_iterations, "a cost")),
        ]
    else:
        lines += ["", f"Cost:              {NOT_REPORTED} by the agent"]
    lines += [
        "",
        "Files Changed:",
        _row("Total:", _files(s.files_changed)),
        _row("Average:", _per(s.files_avg, _files, s, s.files_iterations, "files changed")),
    ]
    if metrics_path is not None:
        lines += ["", f"ℹ  Metrics log saved to: {metrics_path}"]
    return "\n".join(lines)


def _per(value: float | None, show: Callable[[float], str], s: Summary, reported: int, what: str) -> str:
    """`13,350 tokens per iteration`, and over how many iterations when some did not report it."""
    if value is None:
        return NOT_REPORTED
    text = f"{show(value)} per iteration"
    if reported < s.iterations + s.uncounted:
        text += f" (of {reported:,} {'iteration' if reported == 1 else 'iterations'} that reported {what})"
    return text


def line_of(event: Any) -> dict[str, Any]:
    """The metrics line of an IterationFinished event."""
    from ralphloop.protocols import iso

    return metrics_line(
        iteration=event.number,
        timestamp=iso(event.finished_at),
        task_id=event.task_id,
        outcome=event.status,
        agent=event.agent,
        result=event.result,
        files_changed=len(event.files_changed),
        counted=event.counted,
        success=event.success,
    )


class MetricsLog:
    """Subscribes to IterationFinished: one line per iteration in ralph_metrics.jsonl."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, event: object) -> None:
        from ralphloop.events import IterationFinished

        if isinstance(event, IterationFinished):
            append_metrics(self.path, line_of(event))
