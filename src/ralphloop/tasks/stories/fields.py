"""The frontmatter values of a story spec, checked: each a value (its default when invalid) and the
problems, at the line of the field."""

from __future__ import annotations

from ralphloop.tasks.frontmatter import Field
from ralphloop.tasks.priority_words import PRIORITY_FORMS, priority_number
from ralphloop.tasks.problems import Problem
from ralphloop.tasks.stories.files import STORY_ID

STATUSES = ("pending", "ready", "in-progress", "in_progress", "review", "blocked", "done")


def status(field: Field | None, shown: str) -> tuple[str, list[Problem]]:
    """`status:` lower-cased, one of STATUSES; pending when absent."""
    if field is None or field.value is None:
        return "pending", []
    if isinstance(field.value, str) and field.value.strip().lower() in STATUSES:
        return field.value.strip().lower(), []
    message = f"status: {_show(field.value)} is not one of {', '.join(STATUSES)}"
    return "pending", [Problem(shown, message, field.line)]


def priority(field: Field | None, shown: str) -> tuple[int, list[Problem]]:
    """`priority:` as a number (priority_words.priority_number); 0 when absent."""
    if field is None or field.value is None:
        return 0, []
    number = priority_number(field.value) if isinstance(field.value, str) else None
    if number is not None:
        return number, []
    return 0, [Problem(shown, f"priority: {_show(field.value)} is not {PRIORITY_FORMS}", field.line)]


def estimation(field: Field | None, shown: str) -> tuple[str | None, list[Problem]]:
    """`estimation:` as written (any single value)."""
    if field is None or field.value is None:
        return None, []
    if isinstance(field.value, str):
        return field.value, []
    return None, [Problem(shown, "estimation: must be a single value, such as 3 or M", field.line)]


def depends_on(field: Field | None, shown: str) -> tuple[tuple[str, ...], tuple[int, ...], list[Problem]]:
    """The ids, the line of each, and problems: a list of ids, a single id, or nothing."""
    if field is None or field.value is None or field.value in ("", []):
        return (), (), []
    if isinstance(field.value, str):
        items: list[tuple[object, int]] = [(field.value, field.line)]
    elif isinstance(field.value, list):
        items = list(zip(field.value, field.item_lines or (field.line,) * len(field.value), strict=True))
    else:
        return (), (), [Problem(shown, 'depends_on: expected a list of story ids, such as ["7.4"]', field.line)]
    ids: list[str] = []
    lines: list[int] = []
    problems = []
    for item, line in items:
        text = item.strip() if isinstance(item, str) else None
        if text is None or not STORY_ID.fullmatch(text):
            hint = "write one id, or a list such as [7.4, 7.5]"
            problems.append(Problem(shown, f"depends_on: {_show(item)} is not a story id (N.M); {hint}", line))
        elif text not in ids:
            ids.append(text)
            lines.append(line)
    return tuple(ids), tuple(lines), problems


def frs(field: Field | None, shown: str) -> tuple[tuple[str, ...], list[Problem]]:
    """`frs:` (the functional requirements a story covers): a list of ids, or one."""
    if field is None or field.value is None or field.value == "":
        return (), []
    if isinstance(field.value, str):
        return (field.value,), []
    if isinstance(field.value, list) and all(isinstance(item, str) for item in field.value):
        return tuple(item for item in field.value if isinstance(item, str)), []
    return (), [Problem(shown, "frs: expected a list of requirement ids, or one", field.line)]


def _show(value: object) -> str:
    return repr(value) if isinstance(value, str) else "a list" if isinstance(value, list) else "a mapping"
