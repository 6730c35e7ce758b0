"""The prompt for one iteration: template + current task + a bounded slice of recent progress.

The anchors paste all of progress.txt into every prompt, so the prompt (and the bill)
grows with every iteration. Here only the newest `progress_bytes` are included, cut at
an entry boundary, with the path of the full file for anything older.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from msgspec import Struct

from ralphloop.core.errors import RalphError
from ralphloop.core.steering import Said
from ralphloop.files.safe_read import CONFIG_CAP, decode_text, read_file, read_tail
from ralphloop.words.redact import redact_text

if TYPE_CHECKING:
    from datetime import datetime

    from ralphloop.config.policy import Policy
    from ralphloop.core.protocols import AgentRequest, Task, TaskSource
    from ralphloop.project.paths import FeaturePaths

ENTRY_SEPARATOR = "\n---\n"
TASK_PLACEHOLDER = "{{task}}"
CUT_MARKER = "[... older text cut ...]\n"


class PromptParts(Struct, frozen=True):
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
    promise: str | None = None  # config `completion.promise`; None: the default
    guidance: Said = ()  # the user's `ralph say`, not in a prompt yet


def default_template(kind: str = "prd") -> str:
    from importlib import resources  # pathlib and more: only when no prompt file of the feature's own is used

    from ralphloop.plugins.formats import format_of

    name = format_of(kind).template
    package, _, file = name.rpartition(":")  # a plugin's own, "its.package:template.md"; ralph's by its name
    return resources.files(package or "ralphloop.templates").joinpath(file).read_text(encoding="utf-8")


def load_template(path: str | None, label: str, kind: str = "prd") -> str:
    """The template at `path` (a -p file or the feature's prompt.md), or the built-in one for `kind`."""
    if path is None:
        return default_template(kind)
    raw = read_file(path, label, cap=CONFIG_CAP)
    if raw is None:
        raise RalphError(f"{label}: prompt file not found")
    return decode_text(raw, label)


def recent_progress(path: str, max_bytes: int) -> tuple[str, int]:
    """The newest whole entries of progress.txt within `max_bytes`, and the file's full size."""
    found = read_tail(path, max_bytes=max_bytes)
    if found is None:
        return "", 0
    raw, size = found
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
    from ralphloop.analysis.promise import PROMISE  # a run analyses the reply anyway: nothing more to load

    values = {
        "{{feature}}": parts.feature,
        "{{feature_dir}}": parts.feature_dir,
        "{{prd}}": parts.prd,
        "{{progress}}": parts.progress,
        "{{iteration}}": str(parts.iteration),
        "{{task_id}}": parts.task_id,
        "{{promise}}": parts.promise or PROMISE,
    }
    values["{{tasks_file}}"] = parts.prd
    # a loop of `ralph run --parallel` has a slot and a port range of its own (its coordinator's environment); a
    # single loop is slot 0 with the first range
    slot, ports = os.environ.get("RALPH_SLOT", "0"), os.environ.get("RALPH_PORT_BASE", "20000")
    values.update({"{{slot}}": slot, "{{port_base}}": ports})
    body = template
    for placeholder, value in values.items():
        body = body.replace(placeholder, value)
    task_section = parts.task_section
    if parts.promise:  # the built-in templates, a prompt.md `ralph init` wrote and the formats' words name the default
        body, task_section = body.replace(PROMISE, parts.promise), task_section.replace(PROMISE, parts.promise)
    if TASK_PLACEHOLDER in body:  # the template places the task itself (seed 002: the spec between role and workflow)
        head, _, tail = body.partition(TASK_PLACEHOLDER)
        sections = [head + task_section + tail.replace(TASK_PLACEHOLDER, "").rstrip("\n")]
    else:
        sections = [body.rstrip("\n"), "", "---", "", task_section]
    for note in parts.notes:
        sections += ["", f"Note from ralph: {note}"]
    if parts.guidance:  # the user's own words, while the loop runs: after ralph's, read last before the progress
        sections += ["", "## Guidance from the user (ralph say)"]
        for each in parts.guidance:
            said = "the user's answer to the question you asked: " if each.action == "answer" else ""
            sections += ["", f"[{each.at.astimezone():%H:%M}] {said}{each.text}"]
    if "RALPH_SLOT" in os.environ and "RALPH_PORT_BASE" in os.environ:
        count = os.environ.get("RALPH_PORT_COUNT", "100")
        last = int(ports) + int(count) - 1 if ports.isdigit() and count.isdigit() else "?"
        sections += [
            "",
            f"Note from ralph: other loops work beside this one, each in its own worktree. For any server, test "
            f"database or other port you open, use ports {ports}-{last} ($RALPH_PORT_BASE, $RALPH_PORT_COUNT); "
            f"this loop's slot is {slot} ($RALPH_SLOT).",
        ]
    recent, size = recent_progress(parts.progress_file, progress_bytes)
    if recent:
        shown = "the whole file" if size <= progress_bytes else f"the newest entries; the full log is {parts.progress}"
        sections += ["", f"## Recent progress ({shown})", "", recent]
    return "\n".join(sections) + "\n"


def iteration_prompt(
    paths: FeaturePaths,
    source: TaskSource,
    task: Task,
    number: int,
    notes: tuple[str, ...],
    policy: Policy,
    guidance: Said = (),
) -> str:
    """The prompt of iteration `number`: the template with the task's section, the notes about the last
    iteration, the user's guidance and the newest progress entries (bounded: the prompt never grows with the run,
    but for what the user says)."""
    root = paths.project_root
    parts = PromptParts(
        iteration=number,
        feature=paths.name,
        feature_dir=os.path.relpath(paths.dir, root),
        prd=os.path.relpath(source.path, root),
        progress=os.path.relpath(paths.progress, root),
        progress_file=paths.progress,
        task_id=task.id,
        task_section=source.describe(task),
        notes=notes,
        promise=policy.loop.promise,
        guidance=guidance,
    )
    return redact_text(build_prompt(policy.template, parts, policy.loop.progress_bytes))  # notes quote the agent


def iteration_request(
    paths: FeaturePaths, prompt: str, number: int, task: Task, now: datetime, policy: Policy, session: str
) -> AgentRequest:
    """What an agent backend needs to build iteration `number`'s invocation."""
    from ralphloop.core.protocols import AgentRequest

    return AgentRequest(
        prompt=prompt,
        iteration=number,
        project_root=paths.project_root,
        feature_dir=paths.dir,
        prompt_file=paths.iteration_prompt(number),
        task_id=task.id,
        started_at=now,
        model=policy.agent.model,
        resume_session=session or None,
    )
