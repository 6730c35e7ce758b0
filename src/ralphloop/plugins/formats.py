"""The task formats, by name: one row each says how a folder shows it, where its source lives (imported only
when a run opens it), which prompt template it starts from, and how ralph words and treats it. A new format
is its own module (a TaskSource, an `open_source` and a `starter`) plus one row here.

Light on purpose (`ralph status` words its counts with this): the modules a row names are imported lazily.
"""

from __future__ import annotations

import importlib
import os

from ralphloop.plugins import detect as finders

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

# Iterations in a run when neither a flag, the environment, the config nor the format says (seed 003's 20).
DEFAULT_MAX_ITERATIONS = 20


class Format:
    """One task format."""

    __slots__ = (
        "auto_commit",
        "defaults",
        "done_words",
        "found",
        "learn_marks",
        "module",
        "name",
        "narrowable",
        "narrows_itself",
        "next_step",
        "seed",
        "status_words",
        "template",
        "title_commits",
        "units",
    )

    def __init__(
        self,
        name: str,
        module: str,
        found: Callable[[str], bool],
        *,
        template: str,
        done_words: str,
        units: str,
        next_step: str,
        seed: str,
        status_words: str = "",
        defaults: Mapping[str, Any] | None = None,
        auto_commit: bool = False,
        title_commits: bool = False,
        learn_marks: bool = False,
        narrowable: bool = True,
        narrows_itself: bool = False,
    ) -> None:
        self.name = name
        self.module = module  # holds `open_source(paths, *, story_order, resume_from)` and `starter(name, created)`
        self.found = found  # whether a folder holds this format (file names only: cheap)
        self.template = template  # the built-in prompt template (ralphloop/templates/)
        self.done_words = done_words  # "stories pass": how done tasks are counted on screen
        self.units = units  # "Stories", "Tasks", "Steps"
        # `ralph status`'s count line ({} done, {} in all)
        self.status_words = status_words or f"{units + ':':<12}{{}} / {{}} {done_words.rsplit(maxsplit=1)[-1]}"
        self.next_step = next_step  # what `ralph init` tells the user to do next ({shown}: the folder)
        self.seed = seed  # the seed document the format comes from ("seed 002")
        # The seed's own defaults (settings key → value), over ralph's where no config, env or flag sets one:
        # a seed's user gets what their tool did (docs/tasks.md has them in one table).
        self.defaults: Mapping[str, Any] = defaults or {}
        self.auto_commit = auto_commit  # commit each iteration's accepted work unless config says otherwise
        self.title_commits = title_commits  # a commit is titled by the task alone (a checklist's line)
        self.learn_marks = learn_marks  # progress.txt gets [LEARN] lines (seed 002)
        self.narrowable = narrowable  # -s/--story and --resume-from apply
        self.narrows_itself = narrows_itself  # its opener takes --resume-from (it knows what story_order leaves out)

    @property
    def seed_source(self) -> str:
        """Where a setting from `defaults` says it came from (`--dry-run`, an error)."""
        return f"{self.seed}'s default for a {self.name} workspace"

    @property
    def default_max_iterations(self) -> int | None:
        """Iterations a run does when nothing says how many: the seed's, else ralph's 20; None: until done."""
        limit: int | None = self.defaults.get("max_iterations", DEFAULT_MAX_ITERATIONS)
        return limit

    def load(self, attribute: str) -> Any:
        """A function of the format's module (imported now, the first time)."""
        return getattr(importlib.import_module(self.module), attribute)


FORMATS: dict[str, Format] = {
    # In the order they win when a folder holds more than one (a feature made by `ralph init` has prd.json and an
    # empty specs/ folder: it is a prd feature).
    "prd": Format(
        "prd",
        "ralphloop.tasks.prd_json",
        lambda folder: finders.present(os.path.join(folder, "prd.json")),
        template="prompt.md",
        done_words="stories pass",
        units="Stories",
        next_step="write the stories in {shown}/prd.json (or plan them with /ralph-plan in Claude Code)",
        seed="seed 003",  # its defaults (20 iterations, 15-minute timeout) are ralph's own
    ),
    "todo": Format(
        "todo",
        "ralphloop.tasks.todo_md",
        lambda folder: finders.present(os.path.join(folder, "TODO.md")),
        template="prompt-todo.md",
        done_words="tasks done",
        units="Tasks",
        next_step="write the tasks in {shown}/TODO.md",
        seed="seed 004",
        # until complete, on opus (verified against the model that answers)
        defaults={"max_iterations": None, "model": "opus"},
        auto_commit=True,
        title_commits=True,
    ),
    "fix-plan": Format(
        "fix-plan",
        "ralphloop.tasks.fix_plan",
        lambda folder: finders.fix_plan_file(folder) is not None,
        template="prompt-fix-plan.md",
        done_words="tasks done",
        units="Tasks",
        next_step="write the items in {shown}/fix_plan.md and the instructions in {shown}/PROMPT.md",
        seed="seed 000",
        # seed 000 has no per-task retry limit: 5 failures in a row open the circuit breaker
        # (circuit_breaker.failure_threshold); the same 5 attempts at one task stop it on the breaker too
        defaults={"max_retries": 5},
        title_commits=True,
    ),
    "stories": Format(
        "stories",
        "ralphloop.tasks.stories.source",
        finders.has_story_specs,
        template="prompt-story.md",
        done_words="stories done",
        units="Stories",
        next_step="write the story specs in {shown}/specs/epic-N/story-N.M-slug.md",
        seed="seed 002",
        defaults={"max_iterations": 45, "timeout_s": 1800.0},  # ralph.sh's ITERATIONS=45, TIMEOUT=1800 s
        learn_marks=True,
        narrows_itself=True,
    ),
    "goal": Format(
        "goal",
        "ralphloop.tasks.goal",
        finders.is_goal_workspace,
        template="prompt-goal.md",
        done_words="steps done",
        units="Steps",
        next_step="write the goal (and its success criteria) in {shown}/SPRINT.yaml",
        seed="seed 001",
        defaults={"max_iterations": None},  # until the goal is reached
        narrowable=False,
    ),
}


def format_of(kind: str | None) -> Format:
    """The row of `kind`; prd's for None or a name this ralph does not know (an older status.json's)."""
    return FORMATS.get(kind or "prd") or FORMATS["prd"]


def detect(folder: str) -> str | None:
    """The format `folder` holds, by its files (the first row that finds itself there), or None: only file
    names are looked at (`ralph status` resolves features through this)."""
    return next((name for name, row in FORMATS.items() if row.found(folder)), None)
