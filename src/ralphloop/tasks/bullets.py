"""A checklist written without checkboxes (pure): the near miss `ralph validate` and `ralph run` name, and the
checkboxes `ralph validate --fix` would write (cli/validate_fix.py asks, saves and writes).

Which list items are tasks, read from real plans (tests/fixtures/wild/TESTS.md):
- the top level of a list that opens its section, straight under a heading (or a rule, or the file's start);
- not a sub-item: `   - Verify: cargo test` under `1. Make orchestration core complete` is that task's note;
- not a list that follows prose: "Rules:" then `1. Keep it short.` explains, as does "**Expected behavior:**";
- not under a heading that names notes or a record ("Notes", "Core Principles", "Completed", "Summary");
- not under an optional heading of a fix plan (they would not count as tasks anyway), nor under a heading that
  is itself a task (`### 1. [DONE] Add cleanup` then `- **Problem:** ...`: those bullets describe it);
- never in a code fence, an HTML comment or a block quote (the scanner does not see those).
An item already marked done (`✅ ...`, `~~...~~`, `[DONE] ...`) gets a ticked box; the others an open one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from msgspec import Struct

from ralphloop.tasks.checklist import Bullet, Checklist, scan_checklist
from ralphloop.tasks.sections import notes_section
from ralphloop.words.textsafe import one_line

Required = Callable[[tuple[str, ...]], bool]  # whether items under a heading path count (fix plans: not optional)
_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")  # kept, so that a fixed file keeps its line endings
_ITEM = re.compile(r"(?P<lead>[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)(?P<text>\S.*)")
_DONE = re.compile(r"(?:✅|✔|☑|\[done\]|~~.*~~\s*$)", re.IGNORECASE)
# A heading that is a task itself: "1. [DONE] Add cleanup", "[x] Implement AI Opponent", "✅ Setup".
_TASK_HEADING = re.compile(r"(?:\d{1,9}[.)]?\s*)?(?:\[(?:done|todo|wip|pending|x| )\]|✅|☑|✔)", re.IGNORECASE)
QUOTE_WIDTH = 60


class Fix(Struct, frozen=True):
    """What `ralph validate --fix` writes: the file with checkboxes, and the lines that got one."""

    text: str
    lines: tuple[int, ...]
    noun: str  # "bullets", "numbered items" or "list items"


def task_bullets(text: str, checklist: Checklist, required: Required) -> list[Bullet]:
    """The list items of a plan without checkboxes that are its tasks (see the module's rules)."""
    lines = _lines(text)
    return [bullet for bullet in checklist.bullets if _is_task(bullet, lines, required)]


def _is_task(bullet: Bullet, lines: list[str], required: Required) -> bool:
    return (
        bullet.opens_section
        and required(bullet.headings)
        and not any(notes_section(title) or _TASK_HEADING.match(title) for title in bullet.headings)
        and _ITEM.fullmatch(lines[bullet.line - 1]) is not None
    )


def near_miss(text: str, checklist: Checklist, required: Required, fix_command: str) -> tuple[int, str] | None:
    """(line, message) naming what looks like a task but is not a checkbox, and the fix; None when nothing does,
    or when the file has a box that counts (its bullets are then notes beside the tasks)."""
    if any(required(item.headings) for item in checklist.items):
        return None
    lines = _lines(text)
    bullets = task_bullets(text, checklist, required)
    if bullets:
        first = bullets[0]
        what = "numbered item" if first.numbered else "plain bullet"
        return first.line, (
            f"`{_quote(lines[first.line - 1])}` is a {what}: ralph counts only checkboxes (`- [ ] task`); "
            f"`{fix_command}` turns the {len(bullets)} {_noun(bullets)} into checkboxes"
        )
    headings = [
        heading
        for heading in checklist.heading_lines
        if _TASK_HEADING.match(heading.title) and required((heading.title,))
    ]
    if headings:
        count = f"the {len(headings)} tasks" if len(headings) > 1 else "the task"
        return headings[0].line, (
            f"`{_quote(lines[headings[0].line - 1])}` is a heading: ralph counts only checkboxes: "
            f"write {count} as `- [ ] task` lines (`- [x] task` when done)"
        )
    return None


def prose_miss(text: str, checklist: Checklist) -> tuple[int, str]:
    """(line, message) for a file with no task in any form ralph could read or fix: what it holds instead (its
    first heading, or list item, or line: notes, a status page, a design), so the refusal names a place."""
    lines = _lines(text)
    count = len([line for line in lines if line.strip()])
    places = [heading.line for heading in checklist.heading_lines] + [bullet.line for bullet in checklist.bullets]
    first = min(places, default=next((number for number, line in enumerate(lines, 1) if line.strip()), 1))
    headings, bullets = len(checklist.heading_lines), len(checklist.bullets)
    found = [
        *([f"{headings} heading{'s' if headings > 1 else ''}"] if headings else []),
        *([f"{bullets} list item{'s' if bullets > 1 else ''} of notes"] if bullets else []),
    ]
    if not count:
        return 1, "no tasks: the file is empty; write each task as a `- [ ] task` line"
    what = f"{' and '.join(found)} in {count} lines" if found else f"{count} lines of prose"
    return first, (
        f"no tasks: no checkbox (`- [ ] task`) here, only {what}, the first `{_quote(lines[first - 1])}`; "
        "write each task as a `- [ ] task` line"
    )


def checkbox_fix(text: str, required: Required) -> Fix | None:
    """`text` with a box after the marker of each task bullet; None when it has counted boxes or no such bullet."""
    checklist = scan_checklist(text)
    if any(required(item.headings) for item in checklist.items):
        return None
    bullets = task_bullets(text, checklist, required)
    if not bullets:
        return None
    parts = _LINE_BREAK.split(text)  # line N is parts[2 * (N - 1)], its ending the part after it
    bom = "\ufeff" if parts[0].startswith("\ufeff") else ""
    parts[0] = parts[0].removeprefix(bom)
    for bullet in bullets:
        index = 2 * (bullet.line - 1)
        match = _ITEM.fullmatch(parts[index])
        assert match is not None  # task_bullets checked the line
        box = "[x]" if _DONE.match(match.group("text")) else "[ ]"
        parts[index] = f"{match.group('lead')}{box} {match.group('text')}"
    return Fix(bom + "".join(parts), tuple(bullet.line for bullet in bullets), _noun(bullets))


def _lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text.removeprefix("\ufeff"))[::2]


def _quote(line: str) -> str:
    return one_line(line.replace("`", "'"), QUOTE_WIDTH)


def _noun(bullets: list[Bullet]) -> str:
    numbered = sum(bullet.numbered for bullet in bullets)
    if numbered == len(bullets):
        return "numbered items" if numbered > 1 else "numbered item"
    if numbered:
        return "list items"
    return "bullets" if len(bullets) > 1 else "bullet"
