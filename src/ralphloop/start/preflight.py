"""Every problem that stops `ralph run` before its first agent call, found without starting or writing
anything: the one check `ralph validate` and `ralph run` share, so that they cannot disagree.

It covers the run's inputs: the task source (loaded as the run loads it, narrowed by -s/--resume-from,
and every story it could never start), the branch the run would switch to (prd.json's branchName, or
branch.prefix and the feature's name), the prompt template, the circuit breaker's file, the agent's
settings, the library notification URLs need (apprise), and ralph's own files in the workspace (each absent
or a regular file of a readable size).
Config errors are `load_settings`' own, which both commands call. What the machine holds is left to the
run: git's state (git.preflight), executables on PATH, another run holding the lock. One warning both say too:
another tool's files by ralph's names in `.ralph/` (`others_notice`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from typing import NamedTuple

from ralphloop.agents.registry import checked_agent
from ralphloop.config.settings import Settings
from ralphloop.core.clock import Clock
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import Agent, TaskSource, TaskView
from ralphloop.files.safe_read import CONFIG_CAP, LOG_CAP, STATE_CAP, TASK_CAP, check_file, check_folder
from ralphloop.notify.settings import apprise_missing
from ralphloop.plugins.formats import format_of
from ralphloop.project.owner import OWN_FOLDER, check_state_folder, other_tool, others_files
from ralphloop.project.paths import RUNTIME_NAMES, FeaturePaths, display_path
from ralphloop.state.circuit import load_breaker
from ralphloop.tasks.problems import Problem, from_error
from ralphloop.tasks.sources import checked_source
from ralphloop.templates.prompt import load_template
from ralphloop.workspace import git


class Assembly(NamedTuple):
    """What the check built on its way, for the run to use rather than build again: every problem, and each part
    that loaded (None: it did not, or was not asked for)."""

    problems: list[Problem]
    source: TaskSource | None  # opened and narrowed as the run works it
    view: TaskView | None  # its first view
    template: str | None  # the prompt template's text
    branch: tuple[str, str, int] | None  # the branch the task file names, its file and line (format row's `branch`)
    agent: Agent | None  # made as a dry run makes it: whether its CLI is installed is the run's to refuse


def assemble(
    paths: FeaturePaths,
    settings: Settings,
    kind: str,
    *,
    story: str | None = None,
    resume_from: str | None = None,
    reset_circuit: bool = False,
    prompt: str | None = None,
    source: bool = True,
    clock: Clock | None = None,
) -> Assembly:
    """Everything `ralph run` would refuse for this workspace and these settings, in the order it meets them, and
    what the check built on its way: `ralph validate` reads the problems, `ralph run` (start/build.py) the parts
    too, so that the task file, the template, the branch and the breaker are each read once and the agent made
    once. `source=False` leaves out the task
    source, for a caller that has listed its problems already (or must settle a killed iteration first)."""
    problems: list[Problem] = []
    opened: TaskSource | None = None
    view: TaskView | None = None
    if source:
        found, opened, view = checked_source(
            paths, kind, story_order=settings.loop.story_order, story=story, resume_from=resume_from
        )
        problems += found
    branch_found, branch = branch_problems(paths, settings, kind)
    problems += branch_found
    template_path, shown = template_file(prompt, paths, kind)
    template: str | None = None
    try:
        template = load_template(template_path, shown, kind)
    except RalphError as exc:
        problems.append(from_error(exc, shown))
    if not reset_circuit:  # a damaged file is what --reset-circuit is for
        breaker = display_path(paths.circuit_state, paths.project_root)  # as the loop names it
        problems += _refused(
            lambda: load_breaker(paths.circuit_state, breaker, paths.command("reset-circuit")), breaker
        )
    agent: Agent | None = None
    try:
        agent = checked_agent(settings, paths, clock)
    except RalphError as exc:
        problems.append(from_error(exc, "agent"))
    missing = apprise_missing(settings.notify)  # found now, not at the first notification hours later
    problems += [Problem(settings.source("notify_urls"), missing)] if missing else []
    return Assembly(problems + runtime_problems(paths), opened, view, template, branch, agent)


# ralph's own files in a workspace that it reads whole, with the most it reads of each; the others
# (logs it appends to, read from their end) may be of any size.
_READ_WHOLE = {
    "status.json": STATE_CAP,
    "state.json": STATE_CAP,
    ".exit_signals": STATE_CAP,
    ".response_analysis": STATE_CAP,
    ".circuit_breaker_state": STATE_CAP,
    ".circuit_breaker_history": STATE_CAP,
    "ralph_metrics.jsonl": LOG_CAP,
    "PROGRESS.yaml": TASK_CAP,
    ".iteration.json": STATE_CAP,
}


def runtime_problems(paths: FeaturePaths) -> list[Problem]:
    """ralph's own files in the workspace (each absent, or a regular file and no link: the agent works in
    this folder and could put a FIFO or a link to /dev/zero there) and progress.txt; refused before the run
    takes a call slot or writes a byte, rather than hanging or failing half-way."""
    problems: list[Problem] = []
    cwd = os.getcwd()
    shown = display_path(paths.state_dir, cwd)
    problems += _refused(lambda: check_state_folder(paths.state_dir, shown), shown)
    if problems:
        return problems  # every file in it would be refused too: the folder is the one thing to fix
    for name in (*RUNTIME_NAMES, "progress.txt"):
        path = os.path.join(paths.dir, name) if name == "progress.txt" else paths.file(name)
        shown = display_path(path, cwd)
        try:
            if name == "logs":
                _check_logs(path, shown)
            elif name == "loops":  # a parallel run's kept loops: a folder (read only by the views, each file safely)
                check_folder(path, shown)
            elif name == "progress.txt":
                check_file(path, shown, cap=LOG_CAP)  # the user's (tracked): a link to a regular file is fine
            else:
                check_file(path, shown, cap=_READ_WHOLE.get(name), follow=False)
        except RalphError as exc:
            problems.append(from_error(exc, shown))
    # .ralph/.gitignore: ralph extends it, and git itself would wait for ever on a FIFO in its place
    ignore = os.path.join(paths.ralph_dir, ".gitignore")
    problems += _refused(lambda: check_file(ignore, display_path(ignore, cwd), cap=CONFIG_CAP), ignore)
    return problems


def others_notice(paths: FeaturePaths) -> str | None:
    """What `ralph validate` and `ralph run` say when `.ralph/` holds another tool's files by ralph's names
    (project/owner.py): whose they are, where ralph's state is instead, and how to stop committing them."""
    ralph_dir = os.path.abspath(paths.ralph_dir)
    if paths.state_dir != os.path.join(ralph_dir, OWN_FOLDER):
        return None
    names = others_files(ralph_dir)
    if not names:
        return None
    cwd = os.getcwd()
    shown = [display_path(os.path.join(ralph_dir, name), cwd) for name in names]
    one = len(names) == 1
    said = (
        f"{', '.join(shown)} {'is' if one else 'are'} {other_tool(ralph_dir, names)}'s runtime file{'' if one else 's'}"
        f" (not ralph's): ralph leaves {'it' if one else 'them'} alone and keeps its state in"
        f" {display_path(paths.state_dir, cwd)}/"
    )
    try:
        listed = git.run(ralph_dir, "ls-files", "-z", "--", *names)
    except OSError:  # no git on PATH: nothing is committed that ralph could tell
        return said
    tracked = {name for name in listed.stdout.decode(errors="replace").split("\0") if name}
    committed = [path for name, path in zip(names, shown, strict=True) if name in tracked]
    if listed.returncode != 0 or not committed:
        return said
    them = "it" if len(committed) == 1 else "them"
    return f"{said}; to stop committing {them}: git rm --cached {shlex.join(committed)} and add {them} to .gitignore"


def _check_logs(folder: str, shown: str, depth: int = 0) -> None:
    """logs/ is absent or a folder of regular files and real folders (hooks/ holds the hooks' output);
    the next iteration's log must not be a FIFO."""
    check_folder(folder, shown)
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RalphError(f"{shown}: cannot read: {exc.strerror}") from None
    for name in names:
        path = os.path.join(folder, name)
        if depth == 0 and os.path.isdir(path) and not os.path.islink(path):
            _check_logs(path, f"{shown}/{name}", depth + 1)
        else:
            check_file(path, f"{shown}/{name}", follow=False)


def template_file(prompt_flag: str | None, paths: FeaturePaths, kind: str) -> tuple[str | None, str]:
    """The prompt template's file and its label: -p FILE, else the workspace's prompt.md (seed 000:
    PROMPT.md beside the fix plan), else None for the built-in template of the kind of task source."""
    if prompt_flag:
        return prompt_flag, f"-p/--prompt {prompt_flag}"
    candidates = [paths.prompt]
    row = format_of(kind)
    if row.prompt_file:  # a prompt the format keeps beside its file (seed 000's PROMPT.md), its module loaded now
        candidates.append(row.part(row.prompt_file)(paths.dir) or "")
    for path in candidates:
        if path and os.path.lexists(path):  # a FIFO is refused by name by the reader, not passed over
            return path, display_path(path, os.getcwd())
    return None, ""


def branch_problems(
    paths: FeaturePaths, settings: Settings, kind: str
) -> tuple[list[Problem], tuple[str, str, int] | None]:
    """The branch the run would switch to, when git would refuse its name (seed 003: prd.json's branchName; with
    branch.auto_create, branch.prefix and the feature's name), and the branch the task file names (None: none, or
    outside a repository)."""
    if settings.git.branch_auto_create is False or git.toplevel(paths.project_root) is None:
        return [], None  # outside a repository the run never switches branch
    row = format_of(kind)
    named: tuple[str, str, int] | None = None
    if row.branch:
        try:
            named = row.part(row.branch)(paths)
        except RalphError:
            return [], None  # the task source's problem, told once
        if named is not None:
            wanted, where, line = named
            if git.valid_branch_name(paths.project_root, wanted):
                return [], named
            shown = display_path(where, os.getcwd())
            return [Problem(shown, f"branchName {wanted!r}: not a valid git branch name", line)], named
    if not settings.git.branch_auto_create:
        return [], named
    wanted = settings.git.branch_prefix + paths.name
    if git.valid_branch_name(paths.project_root, wanted):
        return [], named
    where = settings.source("branch_auto_create")
    message = f"branch {wanted!r} (branch.prefix and the feature's name, as {where} asks): not a valid git branch name"
    return [Problem(paths.display(), message)], named


def _refused(check: Callable[[], object], fallback: str) -> list[Problem]:
    """The problem `check()` raises, as one Problem; [] when it passes."""
    try:
        check()
    except RalphError as exc:
        return [from_error(exc, fallback)]
    return []
