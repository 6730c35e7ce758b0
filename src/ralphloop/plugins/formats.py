"""The task formats, by name: one row each says how a folder shows it, where its source lives (imported only
when a run opens it), which prompt template it starts from, and how ralph words and treats it. A new format
is its own module (a TaskSource, an `open_source` and a `starter`) plus one row here.

Light on purpose (`ralph status` words its counts with this): the modules a row names are imported lazily.
"""

from __future__ import annotations

import os

from ralphloop.plugins import detect as finders
from ralphloop.plugins.entry_points import entry_points, load
from ralphloop.words.textsafe import one_line

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
        "branch",
        "check",
        "counts",
        "defaults",
        "done_words",
        "found",
        "learn_marks",
        "mark",
        "module",
        "name",
        "narrowable",
        "narrows_itself",
        "next_step",
        "plugin",
        "prompt_file",
        "run_lists_problems",
        "seed",
        "seed_flags",
        "status_words",
        "task_file",
        "tasks_in",
        "template",
        "title_commits",
        "units",
        "works_the_root",
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
        check: str = "",
        run_lists_problems: bool = False,
        counts: str = "",
        branch: str = "",
        prompt_file: str = "",
        task_file: str = "",
        tasks_in: str = "",
        mark: str = "",
        seed_flags: bool = False,
        works_the_root: bool = False,
        plugin: str = "",
    ) -> None:
        self.name = name
        self.module = module  # holds `open_source(paths, *, story_order, resume_from)` and `starter(name, created)`
        self.found = found  # whether a folder holds this format (file names only: cheap)
        self.template = template  # the built-in prompt template (in ralphloop/templates/, or "package:file")
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
        # What the rest of ralph asks of a format, each "module:function", imported when used ("": it has none):
        # `ralph validate`'s check of its files, (paths, story_order) -> [(the name shown, problems)], its own first
        self.check = check
        self.run_lists_problems = run_lists_problems  # the run's check of its source lists every problem of its files
        self.counts = counts  # (paths) -> (done, total) read afresh, light, for `ralph status`; "": the last run's
        self.branch = branch  # (paths) -> (a branch name, its line) the task file names, or None
        self.prompt_file = prompt_file  # (folder) -> a prompt template the format keeps beside its file, or None
        # `--parallel` works its tasks each in a worktree of its own when it names all three: its one task file (a
        # name in the feature folder), (raw bytes, the name shown) -> [FileTask] (its first problem raised as a
        # RalphError) and (raw bytes, task id) -> the bytes with that task marked done
        self.task_file = task_file
        self.tasks_in = tasks_in
        self.mark = mark
        self.seed_flags = seed_flags  # its seed's spellings of -t and -r are refused in its workspace (seed 002's)
        self.works_the_root = works_the_root  # its file in `.ralph/` means the project root is the workspace
        self.plugin = plugin  # the distribution that provides it ("ralphloop-lines 0.1"); "" for ralph's own

    @property
    def seed_source(self) -> str:
        """Where a setting from `defaults` says it came from (`--dry-run`, an error)."""
        return f"{self.seed}'s default for a {self.name} workspace"

    @property
    def default_max_iterations(self) -> int | None:
        """Iterations a run does when nothing says how many: the seed's, else ralph's 20; None: until done."""
        limit: int | None = self.defaults.get("max_iterations", DEFAULT_MAX_ITERATIONS)
        return limit

    @property
    def parallel(self) -> bool:
        """Whether `ralph run --parallel` can work its tasks, each in a worktree of its own."""
        return bool(self.task_file and self.tasks_in and self.mark)

    def load(self, attribute: str) -> Any:
        """A function of the format's module (imported now, the first time)."""
        return load(f"{self.module}:{attribute}")

    def part(self, target: str) -> Any:
        """What one of its "module:function" parts names, imported now."""
        return load(target)


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
        check="ralphloop.tasks.file_checks:prd",
        counts="ralphloop.tasks.prd_counts:story_counts",
        branch="ralphloop.tasks.prd_counts:branch_named",
        task_file="prd.json",
        tasks_in="ralphloop.tasks.prd_table:file_tasks",
        mark="ralphloop.tasks.prd_table:marked",
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
        check="ralphloop.tasks.file_checks:todo",
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
        check="ralphloop.tasks.file_checks:fix_plan",
        works_the_root=True,  # seed 000 keeps its plan and PROMPT.md in .ralph/ and works the root
        prompt_file="ralphloop.tasks.fix_plan:find_prompt",
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
        check="ralphloop.tasks.file_checks:stories",
        run_lists_problems=True,
        seed_flags=True,
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
        check="ralphloop.tasks.file_checks:goal",
        run_lists_problems=True,
    ),
}


ENTRY_POINT_GROUP = "ralphloop.formats"


def find_format(kind: str) -> Format | None:
    """The format called `kind`: ralph's own, else an installed plugin's (looked for only then); None for none."""
    return FORMATS.get(kind) or plugin_formats().get(kind)


def format_of(kind: str | None) -> Format:
    """The row of `kind`: a built-in format, else an installed plugin's; prd's for None or a name no format has
    (an older status.json's)."""
    row = FORMATS.get(kind or "prd")
    if row is None and kind:
        row = plugin_formats().get(kind)
    return row or FORMATS["prd"]


def detect(folder: str) -> str | None:
    """The format `folder` holds, by its files (the first row that finds itself there: ralph's own, then the
    plugins'), or None: only file names are looked at (`ralph status` resolves features through this)."""
    found = next((name for name, row in FORMATS.items() if row.found(folder)), None)
    if found is None:  # the installed plugins are looked for only here: scanning them costs a `ralph status`
        found = next((name for name, row in plugin_formats().items() if row.found(folder)), None)
    return found


# The plug-in formats that could not be loaded, by name: why, said where a folder turns out to be nobody's.
_BROKEN: dict[str, str] = {}


_PLUGINS: list[dict[str, Format]] = []  # read once a process needs them (entry_points.py says why not functools)


def plugin_formats() -> dict[str, Format]:
    """The formats installed packages add under the `ralphloop.formats` entry-point group, each a Format (the first
    of a name wins; a built-in name is never a plugin's). One that cannot be loaded is left out: a folder it would
    find is then nobody's, which every command says, naming it (`missing_message`)."""
    if not _PLUGINS:
        _PLUGINS.append(_read_plugins())
    return _PLUGINS[0]


def _read_plugins() -> dict[str, Format]:
    found: dict[str, Format] = {}
    for point in entry_points(ENTRY_POINT_GROUP):
        if point.name in FORMATS or point.name in found:
            continue
        try:
            row = point.load()
        except Exception as exc:  # a broken plugin is not a crash of every command
            said = one_line(str(exc), 200)
            _BROKEN[point.name] = f"{point.value} from {point.dist}: {type(exc).__name__}{': ' if said else ''}{said}"
            continue
        if isinstance(row, Format) and row.name == point.name:
            row.plugin = point.dist
            found[point.name] = row
        else:
            _BROKEN[point.name] = f"{point.value} from {point.dist}: not a Format named {point.name!r}"
    return found


def missing_message(display: str) -> str:
    """The error for a folder that holds no task source at all, naming the plug-in formats that could not be
    loaded (one of them may be the folder's)."""
    return finders.missing_message(display) + broken_note()


def broken_note() -> str:
    """ "; plug-in format 'x' could not be loaded (why)" for each such format: "" when every one loaded."""
    plugin_formats()
    return "".join(f"; plug-in format {name!r} could not be loaded ({why})" for name, why in _BROKEN.items())


def all_formats() -> dict[str, Format]:
    """Every format: ralph's own, in the order they win, then the installed plugins'."""
    return {**FORMATS, **plugin_formats()}
