"""Where every file lives: the project root, the feature folder and ralph's own files in it.

Plain `os.path` strings and no dataclasses: `ralph status` imports this, and
pathlib and dataclasses together cost more than the whole status budget.
"""

from __future__ import annotations

import os
import shlex

from ralphloop.errors import RalphError
from ralphloop.safe_read import check_file
from ralphloop.tasks import detect as _detect
from ralphloop.tasks.detect import detect, detect_root, missing_message

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
    "PROGRESS.yaml",  # goal mode: ralph's record of the steps, rewritten every iteration (not the agent's work)
)
GITIGNORE_TEXT = (
    "# ralph's runtime files: per-run state, locks and agent logs (kept out of commits)\n"
    "logs/\nstatus.json\nstate.json\n.lock\n.tmp-*\n.exit_signals\n.response_analysis\n"
    ".circuit_breaker_state\n.circuit_breaker_history\nsignals.jsonl\nralph_metrics.jsonl\n"
    "events.jsonl\nevents.jsonl.1\nPROGRESS.yaml\n.iteration.json\nfleet.json\nfleet.jsonl\n.fleet.lock\nloops/\n"
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
    scatter a dozen files over the user's root.
    """

    __slots__ = ("dir", "name", "project_root", "state_dir")

    def __init__(self, project_root: str, folder: str) -> None:
        self.project_root = project_root
        self.dir = os.path.abspath(folder)
        self.name = os.path.basename(self.dir.rstrip(os.sep))
        at_root = os.path.abspath(project_root) == self.dir
        self.state_dir = os.path.join(self.dir, RALPH_DIR) if at_root else self.dir

    def file(self, name: str) -> str:
        """A runtime file of ralph's."""
        return os.path.join(self.state_dir, name)

    @property
    def is_feature_folder(self) -> bool:
        """A folder of its own under .ralph/ (one `ralph archive` may move away)."""
        return os.path.dirname(self.dir) == os.path.abspath(self.ralph_dir)

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
            if not list_features(self.project_root):
                return ""
            value = self.dir
        else:
            value = self.display()
        return feature_flag(value)

    def command(self, *words: str) -> str:
        """`ralph WORDS` with the `-f` words this workspace needs (`flag`), quoted: "ralph status -f auth", a
        command that works when pasted anywhere in the project."""
        return shlex.join(["ralph", *words]) + (f" {self.flag}" if self.flag else "")

    def is_runtime(self, path: str) -> bool:
        """Whether `path` (absolute) is one of ralph's own runtime files in this feature."""
        rel = os.path.relpath(path, self.state_dir)
        if rel.startswith(".."):
            return False
        return rel.split(os.sep, 1)[0] in RUNTIME_NAMES or os.path.basename(rel).startswith(".tmp-")


def feature_flag(value: str) -> str:
    """`-f VALUE` quoted for a shell (`--feature=-x` when VALUE starts with `-`, which argparse takes for a flag)."""
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
    return [
        name
        for name in names
        if not name.startswith(".") and name != ARCHIVE_DIR and detect(os.path.join(base, name)) is not None
    ]


def is_feature_name(selector: str) -> bool:
    """A bare name (`auth`), looked up in .ralph/; `.`, `..` and anything with a slash are folders."""
    name = selector.rstrip(os.sep)
    return bool(name) and os.sep not in name and name not in (".", "..")


def resolve_feature(project_root: str, selector: str | None, *, flag: str = "-f") -> FeaturePaths:
    """The feature named by `selector` (a name in `.ralph/`, or a folder path), or the only one there is.

    With no selector and no feature in `.ralph/`, a project root laid out as seed 000 (fix_plan.md)
    or seed 002 (specs/epic-N/) is the workspace."""
    if selector:
        named = os.path.join(project_root, RALPH_DIR, selector)
        if is_feature_name(selector) and os.path.isdir(named):
            return _checked(project_root, named)
        if os.path.isdir(selector):
            return _checked(project_root, selector)
        if os.path.isdir(os.path.join(project_root, selector)):  # as ralph prints it: from the project root
            return _checked(project_root, os.path.join(project_root, selector))
        if not is_feature_name(selector):  # a path (seed 004's `ralph run plans/x/`) that is not there
            shown = selector.rstrip(os.sep) or selector
            raise RalphError(f"TODO.md not found in {shown} ({flag} {shown}: no such folder)")
        if _is_root_workspace(project_root, selector):  # the name `ralph status` shows for a root workspace
            return FeaturePaths(project_root, project_root)
        known = list_features(project_root)
        hint = f" (features: {', '.join(known)})" if known else " (create it with: ralph init NAME)"
        raise RalphError(f"{flag} {selector}: no such feature in {display_path(named, os.getcwd())}{hint}")
    features = list_features(project_root)
    if len(features) == 1:
        return FeaturePaths(project_root, os.path.join(project_root, RALPH_DIR, features[0]))
    where = display_path(os.path.join(project_root, RALPH_DIR), os.getcwd())
    if not features:
        if detect_root(project_root):
            return FeaturePaths(project_root, project_root)
        raise RalphError(f"no feature in {where}/: create one with: ralph init NAME")
    raise RalphError(f"several features in {where}/ ({', '.join(features)}): choose one with {flag} NAME")


def _is_root_workspace(project_root: str, name: str) -> bool:
    """Whether `name` is the project root's own folder name and the root is a workspace (seeds 000, 002)."""
    root = os.path.abspath(project_root)
    return name.rstrip(os.sep) == os.path.basename(root) and detect_root(root) is not None


def _checked(project_root: str, folder: str) -> FeaturePaths:
    paths = FeaturePaths(project_root, folder)
    if detect(paths.dir) is None:
        for name in _detect.TASK_FILE_NAMES:  # a folder (or a FIFO) by a task file's name: say so
            path = os.path.join(paths.dir, name)
            check_file(path, display_path(path, os.getcwd()))
        if paths.is_feature_folder:
            raise RalphError(f"{paths.display()}: no prd.json in this folder (create a feature with: ralph init NAME)")
        raise RalphError(missing_message(paths.display()))
    return paths
