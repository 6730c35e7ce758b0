"""The fenced ```json result of seed 001 (goal mode), read leniently and typed strictly.

    {"status": "continue" | "goal-complete" | "needs-human", "summary": "...",
     "completedStepIds": [...], "pendingSteps": [{"id": null, "prompt": "..."}],
     "goalCompleteSummary": "...", "humanNeeded": {"reason": "...", "details": "..."}}

A block that is not an object with a `status` is not a result (it may be any JSON the agent
quoted). A result with a wrong field type keeps what is right and names the rest in `problems`.
"""

from __future__ import annotations

import json

from msgspec import Struct

from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import clean_text, strip_terminal_controls

JSON_STATUSES = ("continue", "goal-complete", "needs-human")
MAX_TEXT = 4000
MAX_ITEMS = 200


class PendingStep(Struct, frozen=True):
    id: str | None
    prompt: str


class JsonResult(Struct, frozen=True):
    status: str
    summary: str = ""
    completed_step_ids: tuple[str, ...] = ()
    pending_steps: tuple[PendingStep, ...] = ()
    goal_complete_summary: str = ""
    human_reason: str = ""
    human_details: str = ""
    problems: tuple[str, ...] = ()


def parse_result(body: str) -> tuple[JsonResult | None, str | None]:
    """(result, None) for a valid result; (None, why) for a malformed one; (None, None) for other JSON."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        looks_like_result = '"status"' in body
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return None, (f"malformed JSON result{where}: {_reason(exc)}" if looks_like_result else None)
    except RecursionError:
        return None, ("malformed JSON result: nested too deeply" if '"status"' in body else None)
    if not isinstance(data, dict) or "status" not in data:
        return None, None
    status = data.get("status")
    if status not in JSON_STATUSES:
        return None, f"JSON result status {str(status)[:40]!r} is not one of {', '.join(JSON_STATUSES)}"
    problems: list[str] = []
    human = data.get("humanNeeded")
    if human is not None and not isinstance(human, dict):
        problems.append("humanNeeded: expected an object")
        human = None
    human = human or {}
    return (
        JsonResult(
            status=status,
            summary=_text(data, "summary", problems),
            completed_step_ids=_ids(data.get("completedStepIds"), problems),
            pending_steps=_steps(data.get("pendingSteps"), problems),
            goal_complete_summary=_text(data, "goalCompleteSummary", problems),
            human_reason=_text(human, "reason", problems, "humanNeeded."),
            human_details=_text(human, "details", problems, "humanNeeded."),
            problems=tuple(problems),
        ),
        None,
    )


_SURROGATE = lazy("[\ud800-\udfff]")


def _whole(text: str) -> str:
    """JSON may hold half a character (a lone `\\ud83d`): no file can store it, so it becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _reason(exc: ValueError) -> str:
    return exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)


def _text(data: dict[str, object], key: str, problems: list[str], prefix: str = "") -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        problems.append(f"{prefix}{key}: expected a string")
        return ""
    return _whole(strip_terminal_controls(value[:MAX_TEXT]))  # decoded from JSON: escapes may only appear now


def _ids(value: object, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append("completedStepIds: expected a list")
        return ()
    ids = [
        _whole(clean_text(str(item)))
        for item in value[:MAX_ITEMS]
        if isinstance(item, str | int) and not isinstance(item, bool)
    ]
    if len(ids) != len(value[:MAX_ITEMS]):
        problems.append("completedStepIds: only strings and numbers are step ids")
    return tuple(ids)


def _steps(value: object, problems: list[str]) -> tuple[PendingStep, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append("pendingSteps: expected a list")
        return ()
    steps: list[PendingStep] = []
    for index, item in enumerate(value[:MAX_ITEMS]):
        if isinstance(item, str):  # a bare string is a new step's prompt
            steps.append(PendingStep(None, _whole(strip_terminal_controls(item[:MAX_TEXT]))))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("prompt"), str):
            problems.append(f"pendingSteps[{index}]: expected {{id, prompt}}")
            continue
        step_id = item.get("id")
        prompt = _whole(strip_terminal_controls(item["prompt"][:MAX_TEXT]))
        steps.append(PendingStep(_whole(clean_text(str(step_id))) if step_id is not None else None, prompt))
    return tuple(steps)
