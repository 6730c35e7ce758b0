"""ralph_metrics.jsonl (seed 004): one JSON object per finished iteration (records/summary.py sums them up).

The metrics sink appends a line per iteration; `ralph report` reads them back. Stdlib json only, and no
typing or protocols at run time: `ralph report` imports this and must stay as light as `ralph status`.

Unknown is not zero: when an agent reports no token counts (a plain command), the usage values are
null in the file, "not reported" on screen, and left out of the token averages.
"""

from __future__ import annotations

import gc
import json
import os

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import LOG_CAP, maybe_not_text, read_file, scrub
from ralphloop.files.schemas import METRICS_LINE, kind_of

TYPE_CHECKING = False  # typing costs ~9 ms of import; `ralph report` must stay fast
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ralphloop.core.protocols import AgentResult

METRICS_NAME = "ralph_metrics.jsonl"
SCHEMA_VERSION = METRICS_LINE.version

_SAME_WINDOW_S = 600  # far below any window's length (5 hours and more)
UNCOUNTED = ("interrupted", "usage-limit", "api-error")  # lines written before `counted` was: their outcome tells
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "total_tokens")


_FIELD_KEYS = tuple(METRICS_LINE.fields)

# ---------------------------------------------------------------- writing


# the outcome of a call a parallel run makes to resolve a story's merge conflict (fleet/resolve.py): an agent call
# of the story's, not an iteration of its loop
RESOLVE_OUTCOME = "merge-resolve"


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
    task_title: str | None = None,
    wall_s: float | None = None,
    run_id: str | None = None,
    max_cost_usd: float | None = None,
    window_caps: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """One line of ralph_metrics.jsonl: seed 004's fields in its order, then ralph's own.

    `outcome` is the iteration's status word (events.STATUSES); `success` the loop's verdict (accepted work
    that moved the task state), else what the agent's run alone says. `counted`: whether it counts toward
    max_iterations (a usage limit, an API retry or a wrong model does not). When the agent reported no
    usage, every usage value is null: unknown, not zero. `wall_s`: the iteration's wall time (so the line
    says when it began), `run_id`: the run it belongs to, `max_cost_usd`: that run's cost budget.
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
    return METRICS_LINE.dump(
        {
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
            "task_title": task_title,
            "wall_seconds": None if wall_s is None else round(max(0.0, wall_s), 1),
            "run_id": run_id,
            "max_cost_usd": max_cost_usd,
            "windows": _windows(result) or None,
            "window_caps": dict(window_caps) if window_caps else None,
        }
    )


def _windows(result: AgentResult) -> dict[str, dict[str, Any]]:
    """The windows the call reported, each with the share the book knew before it: the call's own share of the
    window is the difference (0 before, when the window reset since that reading; null when none was known)."""
    from ralphloop.core.protocols import iso

    before = {window.name: window for window in result.windows_before}
    found: dict[str, dict[str, Any]] = {}
    for window in result.windows:
        prior = before.get(window.name)
        same = prior is not None and _same_window(prior.resets_at, window.resets_at)
        found[window.name] = {
            "utilization": window.utilization,
            "resetsAt": iso(window.resets_at) if window.resets_at else None,
            "before": prior.utilization if prior is not None and same else (0.0 if prior is not None else None),
        }
    return found


def append_metrics(path: str | os.PathLike[str], line: Mapping[str, Any]) -> None:
    """Append `line` as one compact JSON line, in a single fsynced write.

    When the file does not end with a newline (a crash cut its last line), a newline comes first,
    so that the new line is whole; `read_metrics` skips the cut one.
    """
    from ralphloop.files.store import append_text  # tempfile and fcntl: only the writer pays for them

    append_text(path, json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n", follow=False)


# ---------------------------------------------------------------- reading


class MetricsRead:
    """The lines of a metrics file, and those skipped as cut short by a crash: (line number, why). A plain class:
    a dataclass costs `ralph run` 3 ms of import and definition before its first agent call."""

    __slots__ = ("lines", "skipped")

    def __init__(self, lines: list[dict[str, Any]], skipped: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.skipped = skipped


def read_metrics(path: str | os.PathLike[str]) -> MetricsRead:
    """Every line of the metrics file at `path`, checked; errors name `path` as given, with the line.

    Tolerated, and listed in `skipped`: a last line that is not valid JSON and has no newline (a crash
    mid-write), and a line elsewhere that is the start of a JSON object cut short (such a line, once
    `append_metrics` wrote after it). Blank lines are ignored. Anything else that is not a metrics
    line (not JSON, not an object, a field of the wrong type) raises RalphError.
    """
    name = os.fspath(path)
    data = read_file(name, name, cap=LOG_CAP, follow=False)
    if data is None:
        raise RalphError(f"{name}: no metrics yet (no iteration has finished)")
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
            except (ValueError, RecursionError) as exc:
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
        except (ValueError, RecursionError):
            skipped.append((number, "an unfinished last line (cut short by a crash?)"))
        else:
            lines.append(_checked(value, name, number, known))
    if maybe_not_text(data):  # a NUL or a lone surrogate would fail the screen or the JSON output
        lines = [scrub(line) for line in lines]
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
    problem = METRICS_LINE.problem(value)
    if problem:
        return problem
    usage = value.get("usage")
    if usage is not None:
        for key in USAGE_KEYS:
            field = usage.get(key)
            if field is not None and type(field) is not int:
                return f'"usage.{key}" is {_kind(field)}, expected an integer'
    return None


def _kind(value: object) -> str:
    return kind_of(value)


def _json_error(exc: ValueError | RecursionError) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
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
    except json.JSONDecodeError as exc:
        if exc.msg.startswith(("Unterminated string", "Invalid \\uXXXX escape")):
            return True
        rest = text[exc.pos :]
        # The decoder stops at the end, or at a token the cut left unfinished: `tr`, `nul`, `1.`, `2e-`, `-`.
        return not rest or rest in _PARTIAL_TOKEN or all(char in "0123456789+-.eE" for char in rest)
    except (ValueError, RecursionError):  # nested too deeply, a number of 4,300+ digits: whole, and wrong
        return False
    return False


def _same_window(one: Any, other: Any) -> bool:
    """Two readings of one window, not of one before it reset and the next: the same reset, give or take the
    minutes a vendor's "resets in N seconds" moves by between two calls."""
    if one is None or other is None:
        return one is other
    return bool(abs((one - other).total_seconds()) < _SAME_WINDOW_S)


def line_of(
    event: Any, max_cost_usd: float | None = None, window_caps: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """The metrics line of an IterationFinished event (in a run whose cost budget is `max_cost_usd`, and whose caps
    on usage windows are `window_caps`)."""
    from ralphloop.core.protocols import iso

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
        task_title=event.task_title,
        wall_s=event.wall_s,
        run_id=event.run_id,
        max_cost_usd=max_cost_usd,
        window_caps=window_caps,
    )


class MetricsLog:
    """Subscribes to IterationFinished: one line per iteration in ralph_metrics.jsonl."""

    def __init__(
        self, path: str, max_cost_usd: float | None = None, window_caps: Mapping[str, float] | None = None
    ) -> None:
        self.path = path
        self.max_cost_usd = max_cost_usd  # the run's budget, on each line: `ralph report --html` charts it
        self.window_caps = window_caps  # the run's caps on usage windows, charted the same way

    def __call__(self, event: object) -> None:
        from ralphloop.core.events import IterationFinished

        if isinstance(event, IterationFinished):
            from ralphloop.files.read import tail_has

            if event.recovered and tail_has(self.path, f'{{"iteration":{event.number},'.encode(), prefix=True):
                return  # written before ralph was killed
            append_metrics(self.path, line_of(event, self.max_cost_usd, self.window_caps))
