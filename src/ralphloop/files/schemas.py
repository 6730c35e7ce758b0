"""The shapes of ralph's JSON files, in one place: every field with its JSON type and its default, and the file's
`schema_version`. Writers build a file's body with `dump` (a field of the wrong type is a bug, caught there);
readers (`ralph status`, the monitor, `ralph report`, a resumed run) read it with `load`, where a field a hand
edit or an older ralph left out, or gave the wrong type, reads as its default and never crashes the reader.

Field tables, not msgspec Structs: `ralph status` reads these and must stay under 40 ms, and importing msgspec
(with typing and inspect) costs 25-50 ms here. Stdlib only, nothing imported.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

REQUIRED = object()  # a field without a default: a line without it is not a line of this file

# ralph's mark on its runtime files, after `schema_version`: another tool (frankbria/ralph-claude-code) keeps files
# of the same names in `.ralph/` (project/owner.py tells them apart)
MARK_KEY = "writer"
MARK = "ralphloop"

# kind → the Python types of its JSON values (bool is not an int here, though Python says it is)
_KINDS: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "number": (int, float),
    "text": (str,),
    "bool": (bool,),
    "list": (list,),
    "object": (dict,),
}
_NAMES = {"int": "an integer", "number": "a number", "text": "a string", "bool": "a boolean", "list": "an array"}


class Schema:
    """One file's fields, in the order they are written: name → (kind, default). A default of None means
    the field may be null."""

    __slots__ = ("fields", "name", "version")

    def __init__(self, name: str, version: int, fields: dict[str, tuple[str, object]]) -> None:
        self.name = name
        self.version = version
        self.fields = fields

    def dump(self, values: Mapping[str, Any], *, versioned: bool = False) -> dict[str, Any]:
        """The file's body, every field in order (one not given is its default). Raises ValueError for an
        unknown field or a value of the wrong type: ralph's own bug, never the user's."""
        unknown = set(values) - set(self.fields)
        if unknown:
            raise ValueError(f"{self.name}: unknown field(s) {', '.join(sorted(unknown))}")
        body: dict[str, Any] = {"schema_version": self.version} if versioned else {}
        for key, (kind, default) in self.fields.items():
            value = values.get(key, None if default is REQUIRED else default)
            if self.wrong(key, value):
                raise ValueError(f"{self.name}: {key} is {type(value).__name__}, expected {_NAMES.get(kind, kind)}")
            body[key] = value
        return body

    def load(self, data: Mapping[str, Any] | None) -> dict[str, Any]:
        """A file as read, checked: every field, of its kind or its default; unknown keys left out."""
        data = data or {}
        loaded: dict[str, Any] = {}
        for key, (_, default) in self.fields.items():
            value = data.get(key)
            fallback = None if default is REQUIRED else default
            loaded[key] = fallback if value is None or self.wrong(key, value) else value
        return loaded

    def wrong(self, key: str, value: object) -> bool:
        """Whether `value` cannot be field `key` (null is right when the field may be null)."""
        kind, default = self.fields[key]
        if value is None:
            return default is REQUIRED or (default is not None and kind != "object")
        return type(value) not in _KINDS[kind]

    def problem(self, data: Mapping[str, Any]) -> str | None:
        """What is wrong with a record, strictly (a metrics line): a required field missing or null, or a
        field of the wrong type; None when nothing is."""
        for key, (kind, default) in self.fields.items():
            value = data.get(key)
            if value is None:
                if default is REQUIRED:
                    return f'"{key}" is missing' if key not in data else f'"{key}" is null'
            elif type(value) not in _KINDS[kind]:
                return f'"{key}" is {kind_of(value)}, expected {_NAMES.get(kind, "an object")}'
        return None


def kind_of(value: object) -> str:
    """A JSON value's kind, as an error names it."""
    names = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number"}
    names.update({bool: "a boolean", type(None): "null"})
    return names.get(type(value), type(value).__name__)


STATUS = Schema(
    "status.json",
    1,
    {
        "iteration": ("int", 0),  # the current (or last) iteration's number: it names the log
        "totalIterations": ("int", 0),  # the same number, for readers of the first schema
        "iterationsCounted": ("int", 0),  # this run's counted iterations
        "callsNotCounted": ("int", 0),  # this run's agent calls that did not count
        "inIteration": ("bool", False),  # an agent is working on `iteration`
        "maxIterations": ("int", None),
        "status": ("text", "not started"),
        "feature": ("text", ""),
        "featureDir": ("text", ""),
        "storiesComplete": ("int", 0),
        "storiesTotal": ("int", 0),
        "scope": ("text", None),  # a narrowed run: "story 8.3"
        "currentStory": ("text", ""),
        "apiCallsUsed": ("int", 0),
        "apiCallsLimit": ("int", None),
        "rateLimitResetsAt": ("text", None),
        "startedAt": ("text", None),
        "lastUpdated": ("text", None),
        "agent": ("text", ""),
        "pid": ("int", None),
        "logFile": ("text", ""),
        "lastOutcome": ("text", ""),
        "exitReason": ("text", None),
        "exitMessage": ("text", None),
        "resetsAt": ("text", None),  # the run stopped at a usage limit or a window cap: when it resets (ISO)
        "lastMessage": ("text", None),  # the agent's last words, when the stop needs the user
        "lastSignals": ("list", []),
        "confidence": ("int", None),
        "refusedClaim": ("text", None),
        "blockedReason": ("text", None),
        "blockedLoops": ("int", 0),
        "testOnlyLoops": ("int", 0),
        "questionLoops": ("int", 0),
        "circuitState": ("text", "CLOSED"),
        "circuitReason": ("text", None),
        "guidance": ("text", None),
        "waiting": ("object", None),  # {kind, message, until}
        "usageLimit": ("object", None),  # {message, vendor, kind, resetsAt, policy, at}
        "retryCount": ("int", 0),
        "maxRetries": ("int", None),
        "model": ("text", None),
        "costUsd": ("number", None),
        "tokensUsed": ("int", None),  # input + output: what --max-tokens counts
        "tokens": ("object", None),  # events.Tally.to_json(): every kind apart
        "activity": ("text", None),
        "sessionId": ("text", None),
        # the header's numbers (added in schema 1: a reader of an older file sees their defaults)
        "storiesAtStart": ("int", None),  # storiesComplete when the run began: its pace counts from there
        "iterationStartedAt": ("text", None),  # the current (or last) iteration's start
        "iterationTimeoutS": ("number", None),  # an iteration's time limit (-t)
        "lastOutputAt": ("text", None),  # the agent's last output in the current iteration; null before any
        "maxCostUsd": ("number", None),  # the run's budgets (--max-cost, --max-tokens, --max-runtime)
        "maxTokens": ("int", None),
        "maxRuntimeS": ("number", None),
        "durationS": ("number", None),  # an ended run's wall time, as its summary line says it; null while it runs
        # issue 34: the run's agent accounts and the user's caps on their usage windows (the windows are in the book)
        "pacing": ("object", None),  # {accounts: [{agent, account}], caps: {window: share}}
    },
)

STATE = Schema(
    "state.json",
    1,
    {
        "completed_stories": ("list", []),  # seed 002's fields first
        "current_story": ("text", None),
        "retry_count": ("int", 0),
        "iteration": ("int", 0),
        "last_outcome": ("object", None),
        "next_prompt_notes": ("list", []),
        "streaks": ("object", {}),
        "last_exit_reason": ("text", ""),
        "session_id": ("text", ""),
        "updated_at": ("text", ""),
    },
)

BREAKER = Schema(
    ".circuit_breaker_state",
    1,
    {
        "state": ("text", "CLOSED"),  # seed 000's fields first
        "last_change": ("text", None),
        "consecutive_no_progress": ("int", 0),
        "consecutive_churn": ("int", 0),
        "consecutive_same_error": ("int", 0),
        "consecutive_failures": ("int", 0),
        "consecutive_permission_denials": ("int", 0),
        "last_progress_loop": ("int", 0),
        "total_opens": ("int", 0),
        "reason": ("text", ""),
        "current_loop": ("int", 0),
        "opened_at": ("text", None),
        "last_error": ("text", None),
        "last_error_fingerprint": ("text", None),
        "denied_commands": ("list", []),
        "probation": ("bool", False),
    },
)

METRICS_LINE = Schema(
    "ralph_metrics.jsonl line",
    1,
    {
        "iteration": ("int", REQUIRED),  # seed 004's fields in its order, then ralph's
        "timestamp": ("text", None),
        "duration_seconds": ("number", REQUIRED),
        "model": ("text", None),
        "stop_reason": ("text", None),
        "usage": ("object", None),
        "files_changed": ("int", None),
        "success": ("bool", REQUIRED),
        "exit_code": ("int", None),
        "cost_usd": ("number", None),
        "num_turns": ("int", None),
        "session_id": ("text", None),
        "task_id": ("text", None),
        "outcome": ("text", None),
        "agent": ("text", None),
        "counted": ("bool", None),  # lines before this field say it by their outcome
        "task_title": ("text", None),  # the task as it was titled then (the receipt of `ralph report`)
        "wall_seconds": ("number", None),  # the iteration's wall time, ralph's own included: it began then
        "run_id": ("text", None),  # which run (a budget is a run's): lines before these fields have none
        "max_cost_usd": ("number", None),  # that run's cost budget (--max-cost, budget.max_cost_usd), when set
        # issue 34: the usage windows the call reported, {name: {utilization, resetsAt, before}} (`before`: the share
        # the book knew before the call, 0 when the window has reset since, null unknown), and the run's caps
        "windows": ("object", None),
        "window_caps": ("object", None),
    },
)
