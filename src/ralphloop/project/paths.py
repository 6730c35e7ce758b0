"""Where every file lives: the project root, the feature folder and ralph's own files in it.

Plain `os.path` strings and no dataclasses: `ralph status` imports this, and
pathlib and dataclasses together cost more than the whole status budget.
"""

from __future__ import annotations

import os

from ralphloop.plugins import detect as _detect
from ralphloop.plugins.formats import detect
from ralphloop.project.places import usual_places
from ralphloop.words.patterns import lazy

RALPH_DIR = _detect.RALPH_DIR  # every module finds it here

ARCHIVE_DIR = "archive"

# ralph's runtime files inside a feature folder: kept out of the user's commits,
# out of "files changed", and out of archives where they make no sense.
RUNTIME_NAMES = (
    "logs",
    "status.json",
    "state.json",
    ".lock",
    ".iteration.json",
    ".start_at.json",  # `ralph run --start-at`: the instant decided (state/start_at.py)
    "control.json",  # what the user asked of the loop: pause, stop, guidance (records/control.py)
    "control.json.lock",
    ".exit_signals",
    ".response_analysis",
    "signals.jsonl",
    ".circuit_breaker_state",
    ".circuit_breaker_history",
    "ralph_metrics.jsonl",
    "events.jsonl",
    "events.jsonl.1",
    "fleet.json",  # a parallel run (state/fleet.py)
    "fleet.jsonl",
    ".fleet.lock",
    "loops",
    "temporal.json",  # a parallel run on Temporal: where its workflow is (temporal/launch.py)
    "PROGRESS.yaml",  # goal mode: ralph's record of the steps, rewritten every iteration (not the agent's work)
)
GITIGNORE_TEXT = (
    "# ralph's runtime files: per-run state, locks and agent logs (kept out of commits)\n"
    "logs/\nstatus.json\nstate.json\n.lock\n.tmp-*\n.exit_signals\n.response_analysis\n"
    ".circuit_breaker_state\n.circuit_breaker_history\nsignals.jsonl\nralph_metrics.jsonl\n"
    "events.jsonl\nevents.jsonl.1\nPROGRESS.yaml\n.iteration.json\nfleet.json\nfleet.jsonl\n.fleet.lock\nloops/\n"
    "control.json\ncontrol.json.lock\ntemporal.json\n"
)


def ralph_home() -> str:
    """The per-user folder (`~/.ralph`, or $RALPH_HOME): global config and per-account counters."""
    return os.path.abspath(os.environ.get("RALPH_HOME") or os.path.expanduser("~/.ralph"))


def find_project_root(start: str | None = None) -> str:
    """The nearest folder at or above `start` that holds `.ralph/`, not past the git root.

    When none does, the git root (the first folder with `.git`), else `start` itself.
    The per-user `~/.ralph` is never taken for a project's.
    """
    here = os.path.abspath(start or os.getcwd())
    home = ralph_home()
    folder = here
    while True:
        candidate = os.path.join(folder, RALPH_DIR)
        if os.path.isdir(candidate) and os.path.abspath(candidate) != home:
            return folder
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return here
        folder = parent


class FeaturePaths:
    """Every path of one feature folder; build it with `resolve_feature`.

    The task files, progress.txt and prompt.md live in `dir`. ralph's runtime files (state, status,
    logs, breaker, metrics) live in `state_dir`: the same folder, except when the workspace is the
    project root itself (seed 000's and seed 002's layouts), where they go to `.ralph/` rather than
    scatter a dozen files over the user's root. When `.ralph/` holds another tool's files by ralph's names
    (frankbria/ralph-claude-code's status.json, .circuit_breaker_state, ...), they go to `.ralph/.ralphloop/`
    (project/owner.py): decided here, so that every reader finds them.
    """

    __slots__ = ("dir", "name", "project_root", "state_dir")

    def __init__(self, project_root: str, folder: str) -> None:
        self.project_root = project_root
        self.dir = os.path.abspath(folder)
        self.name = feature_name(self.dir, project_root)
        at_root = os.path.abspath(project_root) == self.dir
        self.state_dir = os.path.join(self.dir, RALPH_DIR) if at_root else self.dir
        if self.state_dir == os.path.join(os.path.abspath(project_root), RALPH_DIR):
            from ralphloop.project.owner import state_folder  # the only folder another Ralph tool writes in

            self.state_dir = state_folder(self.state_dir)

    def file(self, name: str) -> str:
        """A runtime file of ralph's."""
        return os.path.join(self.state_dir, name)

    @property
    def is_feature_folder(self) -> bool:
        """A folder of its own under .ralph/ (one `ralph archive` may move away)."""
        return os.path.dirname(self.dir) == os.path.abspath(self.ralph_dir)

    @property
    def is_archived(self) -> bool:
        """A feature `ralph archive` (or a completed run) moved into `.ralph/archive/`."""
        return os.path.dirname(self.dir) == os.path.abspath(self.archive_root)

    @property
    def prd(self) -> str:
        return os.path.join(self.dir, "prd.json")

    @property
    def progress(self) -> str:
        return os.path.join(self.dir, "progress.txt")

    @property
    def status(self) -> str:
        return self.file("status.json")

    @property
    def state(self) -> str:
        return self.file("state.json")

    @property
    def lock(self) -> str:
        return self.file(".lock")

    @property
    def journal(self) -> str:
        """The iteration in flight (records/journal.py): what the next run reconciles after a kill."""
        return self.file(".iteration.json")

    @property
    def start_at(self) -> str:
        return self.file(".start_at.json")

    @property
    def control(self) -> str:
        return self.file("control.json")

    @property
    def prompt(self) -> str:
        return os.path.join(self.dir, "prompt.md")

    @property
    def signals(self) -> str:
        return self.file("signals.jsonl")

    @property
    def response_analysis(self) -> str:
        return self.file(".response_analysis")

    @property
    def exit_signals(self) -> str:
        return self.file(".exit_signals")

    @property
    def circuit_state(self) -> str:
        return self.file(".circuit_breaker_state")

    @property
    def circuit_history(self) -> str:
        return self.file(".circuit_breaker_history")

    @property
    def metrics(self) -> str:
        return self.file("ralph_metrics.jsonl")

    @property
    def events(self) -> str:
        return self.file("events.jsonl")

    @property
    def logs(self) -> str:
        return self.file("logs")

    def iteration_log(self, number: int) -> str:
        return os.path.join(self.logs, f"iteration-{number}.log")

    def iteration_prompt(self, number: int) -> str:
        return os.path.join(self.logs, f"iteration-{number}.prompt.md")

    @property
    def ralph_dir(self) -> str:
        return os.path.join(self.project_root, RALPH_DIR)

    @property
    def archive_root(self) -> str:
        return os.path.join(self.ralph_dir, ARCHIVE_DIR)

    def display(self) -> str:
        """The folder as the user would type it: relative to the project when inside it."""
        return display_path(self.dir, self.project_root)

    @property
    def selector(self) -> str:
        """How the workspace is named to the user: its name in .ralph/, the root's name for a root workspace
        (seeds 000, 002), else its folder."""
        if self.is_feature_folder or self.dir == os.path.abspath(self.project_root):
            return self.name
        return self.display()

    @property
    def flag(self) -> str:
        """The `-f` words a printed `ralph` command needs to find this workspace from anywhere in the project:
        none for a root workspace found without naming it; its name for a feature in .ralph/; else its folder
        from the project root (the root itself by its absolute path). `--feature=X` when X starts with `-`."""
        if self.is_feature_folder:
            value = self.name
        elif self.dir == os.path.abspath(self.project_root):
            if not list_features(self.project_root) and usual_places(self.project_root) == [self.dir]:
                return ""  # what a bare command finds
            value = self.dir
        else:
            value = self.display()
        return feature_flag(value)

    def command(self, *words: str) -> str:
        """`ralph WORDS` with the `-f` words this workspace needs (`flag`), quoted: "ralph status -f auth", a
        command that works when pasted anywhere in the project."""
        import shlex  # with re: only where a command is shown, never for `ralph status --json`

        return shlex.join(["ralph", *words]) + (f" {self.flag}" if self.flag else "")

    def is_runtime(self, path: str) -> bool:
        """Whether `path` (absolute) is one of ralph's own runtime files in this feature."""
        rel = os.path.relpath(path, self.state_dir)
        if rel.startswith(".."):
            return False
        return rel.split(os.sep, 1)[0] in RUNTIME_NAMES or os.path.basename(rel).startswith(".tmp-")


# An archive's folder name: `<stamp>-<feature>`, then `-2`, `-3` ... where that name was taken (project/archive.py).
ARCHIVE_NAME = lazy(r"(?P<stamp>\d{8}-\d{6})-(?P<name>.+?)(?:-(?P<copy>\d+))?")


def feature_name(folder: str, project_root: str) -> str:
    """A workspace's name: its folder's, but the project's for `.ralph/` itself, and an archived feature's own
    (`.ralph/archive/20260101-120000-auth` is `auth`), where the `-N` of a taken name is dropped only when the name
    without it is taken too (a feature may be called `v-2`)."""
    base = os.path.basename(folder.rstrip(os.sep))
    if os.path.abspath(folder) == os.path.join(os.path.abspath(project_root), RALPH_DIR):
        return os.path.basename(os.path.abspath(project_root))  # `.ralph/prd.json`: the project's own list
    archive = os.path.join(os.path.abspath(project_root), RALPH_DIR, ARCHIVE_DIR)
    if os.path.dirname(folder.rstrip(os.sep)) != archive:
        return base  # an active feature: no pattern (nor re's import) for `ralph status`
    matched = ARCHIVE_NAME.fullmatch(base)
    if matched is None:
        return base
    copy = matched["copy"]
    if copy is None:
        return matched["name"]
    first = os.path.join(archive, f"{matched['stamp']}-{matched['name']}")
    return matched["name"] if int(copy) >= 2 and os.path.lexists(first) else f"{matched['name']}-{copy}"


def feature_flag(value: str) -> str:
    """`-f VALUE` quoted for a shell (`--feature=-x` when VALUE starts with `-`, which argparse takes for a flag)."""
    import shlex

    return shlex.quote(f"--feature={value}") if value.startswith("-") else f"-f {shlex.quote(value)}"


def display_path(path: str, root: str) -> str:
    """`path` relative to `root` when it lies inside it, else absolute."""
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel


def list_features(project_root: str) -> list[str]:
    """Names of the feature folders in `.ralph/` (those holding a task source), sorted."""
    base = os.path.join(project_root, RALPH_DIR)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    # a file there is no feature: only a folder is asked what it holds (a plug-in format is looked for only then)
    return [
        name
        for name in names
        if not name.startswith(".")
        and name != ARCHIVE_DIR
        and os.path.isdir(os.path.join(base, name))
        and detect(os.path.join(base, name)) is not None
    ]


def is_feature_name(selector: str) -> bool:
    """A bare name (`auth`), looked up in .ralph/; `.`, `..` and anything with a slash are folders."""
    name = selector.rstrip(os.sep)
    return bool(name) and os.sep not in name and name not in (".", "..")
