"""A parallel run keeps its runtime files out of git as a single run does (issue 31 review): the coordinator's
fleet.json, fleet.jsonl, .fleet.lock, .lock and loops/ sit in the workspace's state folder of the user's own tree,
and were left untracked and not ignored (for a workspace `ralph init` had not made), so the user's next `git add -A`
committed them. Each usual place of a prd.json, found by a bare `ralph run --parallel 2`: real git, real worktrees,
real child loops, the story agent of tests/integration/test_parallel.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd, write_prd
from tests.integration.helpers import git

# where the prd.json is, and the folder ralph keeps its runtime files in for it
PLACES = {".ralph/feat": ".ralph/feat", ".ralph": ".ralph", "scripts/ralph": "scripts/ralph", ".": ".ralph"}


@pytest.mark.parametrize("place", PLACES)
def test_a_parallel_runs_files_are_not_left_for_the_users_next_commit(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], place: str
) -> None:
    write_prd(project / place, 2, branchName="ralph/feat")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-qm", "the task file, where the user keeps it")

    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 2 stories merged into ralph/feat." in done.stdout, done.stdout
    state = project / PLACES[place]
    assert all((state / name).exists() for name in ("fleet.json", "fleet.jsonl", ".fleet.lock", ".lock", "loops"))
    # what `git add -A` would take: at most the .ralph/.gitignore a single run writes too (ralph init's), to commit
    left = git(project, ralph_env, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert set(left) <= {"?? .ralph/.gitignore"}, left
