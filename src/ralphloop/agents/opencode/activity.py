"""opencode's `run --format json` lines as a person reads them, and the tool a run used last.

The monitor shows a log's tail through `readable_lines`; the parser names what the agent is doing with
`tool_activity`. opencode tells of a tool only once it has ended (a `tool_use` event with the tool's final
state), so the live line names the tool the agent ran last, and "Thinking" once a new step starts. Its own error
log lines (the `[stderr] ` lines of ralph's log, log_lines.py) read as one warning each. Kept free of the
backend's imports so the monitor loads only this.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.fields import labelled, mapping, text_lines
from ralphloop.agents.json_lines import log_event
from ralphloop.agents.opencode import log_lines
from ralphloop.words.textsafe import one_line

EVENT_TYPES = frozenset({"step_start", "step_finish", "text", "reasoning", "tool_use", "error"})
_LABELS = {
    "bash": "Shell",
    "edit": "Edit",
    "write": "Write",
    "read": "Read",
    "apply_patch": "Patch",
    "glob": "Glob",
    "grep": "Grep",
    "list": "List",
    "webfetch": "Fetch",
    "websearch": "Search",
    "task": "Task",
    "todowrite": "Plan",
    "skill": "Skill",
    "lsp": "LSP",
}
# The input field that says what a tool worked on, when it has no title.
_DETAIL_KEYS = ("command", "filePath", "path", "pattern", "url", "query", "description")
_STDERR = "[stderr] "


def tool_activity(part: dict[str, Any]) -> str:
    """ "Shell: pytest -q", "Edit: src/app.py": what a `tool` part did, on one line."""
    tool = str(part.get("tool") or "tool")
    state = mapping(part.get("state"))
    given = mapping(state.get("input"))
    detail = next((given[key] for key in _DETAIL_KEYS if isinstance(given.get(key), str) and given[key]), None)
    if tool == "invalid":  # a call to a tool opencode does not offer (e.g. one its permissions removed)
        called = str(given.get("tool") or "tool")
        return f"{_LABELS.get(called, one_line(called, 60))} (not offered)"
    if detail is None and isinstance(state.get("title"), str):
        detail = state["title"]
    return labelled(_LABELS.get(tool, one_line(tool, 60)), detail or "")


def tool_failed(part: dict[str, Any]) -> str | None:
    """Why a `tool` part failed (its error, or a shell's non-zero exit), or None when it did not."""
    state = mapping(part.get("state"))
    if state.get("status") == "error":
        return str(state.get("error") or "failed")
    if part.get("tool") == "invalid":
        return str(mapping(state.get("input")).get("error") or "no such tool")
    code = mapping(state.get("metadata")).get("exit")
    if part.get("tool") == "bash" and isinstance(code, int) and not isinstance(code, bool) and code != 0:
        output = state.get("output")
        return f"exit {code}: {output}" if isinstance(output, str) and output.strip() else f"exit {code}"
    return None


def is_event(event: dict[str, Any]) -> bool:
    """Whether a JSON object is one of `opencode run --format json`'s events."""
    kind = event.get("type")
    return (
        kind in EVENT_TYPES
        and isinstance(event.get("sessionID"), str)
        and (isinstance(event.get("part"), dict) or isinstance(event.get("error"), dict))
    )


def sniff(events: list[dict[str, Any]]) -> bool:
    """Whether a saved log's first JSON events are `opencode run --format json` output."""
    return any(is_event(event) for event in events)


def readable_lines(line: str) -> list[str] | None:
    """What one line of an opencode log says, as zero or more lines of text; None when it is none of opencode's
    (plain output, another CLI's JSON, another program's stderr), so the caller shows it as it is."""
    if line.startswith(_STDERR):
        return _log_line(line[len(_STDERR) :])
    event = log_event(line, is_event)
    if event is None:
        return None
    kind = event["type"]
    part = mapping(event.get("part"))
    if kind == "text" and isinstance(part.get("text"), str):
        return text_lines(part["text"])
    if kind == "tool_use":
        failed = tool_failed(part)
        doing = tool_activity(part)
        return [f"✗ {doing}: {one_line(failed, 160)}"] if failed else [f"⚙ {doing}"]
    if kind == "step_finish":
        return [_step_line(part)]
    if kind == "error":
        error = mapping(event.get("error"))
        said = mapping(error.get("data")).get("message") or error.get("name") or "error"
        return [f"✗ opencode error: {one_line(str(said), 200)}"]
    return []


def _step_line(part: dict[str, Any]) -> str:
    tokens = mapping(part.get("tokens"))
    cache = mapping(tokens.get("cache"))
    counts = [(tokens.get("input"), "in"), (cache.get("read"), "cached"), (tokens.get("output"), "out")]
    said = [f"{n:,} {word}" for n, word in counts if isinstance(n, int) and not isinstance(n, bool) and n]
    cost = part.get("cost")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
        said.append(f"${cost:.4f}")
    reason = one_line(str(part.get("reason") or ""), 30)
    return f"■ step {'done' if reason == 'stop' else reason or 'ended'}{': ' + ' · '.join(said) if said else ''}"


def _log_line(text: str) -> list[str] | None:
    found = log_lines.parse(text)
    if found is None:
        return None
    if found.level not in ("ERROR", "WARN"):
        return []
    error = found.error
    return [f"⚠ opencode: {one_line(found.message, 80)}{': ' + one_line(error, 200) if error else ''}"]
