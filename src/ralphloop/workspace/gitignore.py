"""ralph's runtime files kept out of commits: `.ralph/.gitignore` (made by `ralph init`, checked by every `ralph run`,
which must not import `ralph init`'s templates and task formats for it), and `.git/info/exclude` for the runtime
files of a workspace outside `.ralph/`."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ralphloop.files.safe_read import CONFIG_CAP, read_file
from ralphloop.files.store import atomic_write_text
from ralphloop.project.owner import OWN_FOLDER
from ralphloop.project.paths import GITIGNORE_TEXT, RALPH_DIR, RUNTIME_NAMES, FeaturePaths
from ralphloop.workspace import git


def ensure_gitignore(ralph_dir: str) -> bool:
    """Keep ralph's runtime files out of commits; True when the file was created or extended. ralph's own
    `.ralphloop/` (its state beside another tool's files, project/owner.py) is listed once it is there."""
    path = os.path.join(ralph_dir, ".gitignore")
    own = [f"{OWN_FOLDER}/"] if os.path.isdir(os.path.join(ralph_dir, OWN_FOLDER)) else []
    raw = read_file(path, cap=CONFIG_CAP)
    if raw is None:
        atomic_write_text(path, GITIGNORE_TEXT + "".join(f"{line}\n" for line in own))
        return True
    present = raw.decode("utf-8", "replace")
    have = set(present.splitlines())
    wanted = [*GITIGNORE_TEXT.splitlines(), *own]
    missing = [line for line in wanted if line and not line.startswith("#") and line not in have]
    if not missing:
        return False
    prefix = "" if present.endswith("\n") or not present else "\n"
    atomic_write_text(path, present + prefix + "\n".join(missing) + "\n")
    return True


def keep_out_of_git(paths: FeaturePaths, log_file: str | None = None, agent_patterns: Sequence[str] | str = ()) -> None:
    """Runtime files never reach a commit, a capture or an undo: .ralph/.gitignore covers those in
    .ralph/; elsewhere (a plan folder, scripts/ralph, --log-file) their paths go to .git/info/exclude, and so do the
    patterns of the files the agent CLI keeps in the repository (`agent.runtime_files`, e.g. aider's caches). Called
    by a single run and by a parallel run's coordinator (its fleet.json, loops/ and locks) before either writes one."""
    ralph_dir = os.path.join(paths.project_root, RALPH_DIR)
    if isinstance(agent_patterns, str):  # a plugin's single pattern
        agent_patterns = (agent_patterns,)
    patterns = []
    if os.path.commonpath([paths.state_dir, ralph_dir]) == ralph_dir:
        ensure_gitignore(ralph_dir)
    else:
        patterns += [os.path.join(paths.state_dir, name) for name in RUNTIME_NAMES]
    if log_file:
        patterns.append(os.path.abspath(log_file))
    top = git.toplevel(paths.project_root)
    if top is None or not (patterns or agent_patterns):
        return
    # .git/info/exclude patterns are read against the repository's top, not the project root
    inside = [os.path.relpath(path, top) for path in patterns]
    literal = ["/" + _glob_escape(rel) for rel in inside if not rel.startswith("..")]
    rules = [rule for rule in agent_patterns if isinstance(rule, str) and rule.strip() and "\n" not in rule]
    git.exclude_paths(top, [*literal, *rules])


def _glob_escape(path: str) -> str:
    """A path as a literal gitignore pattern (a plan folder may be called `[draft]`)."""
    return "".join("\\" + char if char in "*?[\\" else char for char in path)
