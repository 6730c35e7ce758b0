"""The prompt for one iteration: template + current task + a bounded slice of recent progress.

The anchors paste all of progress.txt into every prompt, so the prompt (and the bill)
grows with every iteration. Here only the newest `progress_bytes` are included, cut at
an entry boundary, with the path of the full file for anything older.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources

from ralphloop.errors import RalphError

ENTRY_SEPARATOR = "\n---\n"
TASK_PLACEHOLDER = "{{task}}"
CUT_MARKER = "[... older text cut ...]\n"


@dataclass(frozen=True, slots=True)
class PromptParts:
    """What goes into one prompt besides the template."""

    iteration: int
    feature: str
    feature_dir: str
    prd: str
    progress: str
    progress_file: str
    task_id: str
    task_section: str
    notes: tuple[str, ...] = ()


# The built-in template of each kind of task source.
_TEMPLATES = {
    "prd": "prompt.md",
    "todo": "prompt-todo.md",
    "fix-plan": "prompt-fix-plan.md",
    "stories": "prompt-story.md",
    "goal": "prompt-goal.md",
}


def default_template(kind: str = "prd") -> str:
    name = _TEMPLATES.get(kind, "prompt.md")
    return resources.files("ralphloop.templates").joinpath(name).read_text(encoding="utf-8")


def load_template(path: str | None, label: str, kind: str = "prd") -> str:
    """The template at `path` (a -p file or the feature's prompt.md), or the built-in one for `kind`."""
    if path is None:
        return default_template(kind)
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise RalphError(f"{label}: prompt file not found") from None
    except UnicodeDecodeError:
        raise RalphError(f"{label}: prompt file is not UTF-8 text") from None
    except OSError as exc:
        raise RalphError(f"{label}: cannot read prompt file: {exc.strerror}") from None


def recent_progress(path: str, max_bytes: int) -> tuple[str, int]:
    """The newest whole entries of progress.txt within `max_bytes`, and the file's full size."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                handle.seek(size - max_bytes)
            raw = handle.read(max_bytes)
    except FileNotFoundError:
        return "", 0
    if size > max_bytes:
        # The cut may fall inside a character: skip its continuation bytes rather than show U+FFFD.
        raw = raw.lstrip(bytes(range(0x80, 0xC0)))
    text = raw.decode("utf-8", "replace")
    if size > max_bytes:
        cut = text.find(ENTRY_SEPARATOR)
        if cut >= 0:
            text = text[cut + 1 :]
        else:
            # One entry is larger than the whole budget: keep its tail, from a line start when there is one.
            rest = text.split("\n", 1)[1] if "\n" in text else ""
            text = CUT_MARKER + (rest if rest.strip() else text)
    return text.strip("\n"), size


def build_prompt(template: str, parts: PromptParts, progress_bytes: int) -> str:
    """The whole prompt for one iteration."""
    values = {
        "{{feature}}": parts.feature,
        "{{feature_dir}}": parts.feature_dir,
        "{{prd}}": parts.prd,
        "{{progress}}": parts.progress,
        "{{iteration}}": str(parts.iteration),
        "{{task_id}}": parts.task_id,
    }
    values["{{tasks_file}}"] = parts.prd
    body = template
    for placeholder, value in values.items():
        body = body.replace(placeholder, value)
    if TASK_PLACEHOLDER in body:  # the template places the task itself (seed 002: the spec between role and workflow)
        head, _, tail = body.partition(TASK_PLACEHOLDER)
        sections = [head + parts.task_section + tail.replace(TASK_PLACEHOLDER, "").rstrip("\n")]
    else:
        sections = [body.rstrip("\n"), "", "---", "", parts.task_section]
    for note in parts.notes:
        sections += ["", f"Note from ralph: {note}"]
    recent, size = recent_progress(parts.progress_file, progress_bytes)
    if recent:
        shown = "the whole file" if size <= progress_bytes else f"the newest entries; the full log is {parts.progress}"
        sections += ["", f"## Recent progress ({shown})", "", recent]
    return "\n".join(sections) + "\n"
