"""One loop per worktree (issue 20, item 1): two features in one set of files would undo and commit each
other's work, so the second run is refused, told who holds the worktree and how to run side by side."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd, read_json, write_prd
from tests.integration.conftest import Background
from tests.integration.helpers import read_pid, wait_until

# The holding run's live status file: it goes on writing it (the agent's last output, a second later).
HOLDERS_LOGS = ".ralph/feat/logs/"
HOLDERS_STATUS = ".ralph/feat/status.json"


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` but git's own and what the holding run writes as it goes (its status.json, its
    iteration's log: its agent may still be printing), with its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and ".git" not in path.relative_to(root).parts
        and str(path.relative_to(root)) != HOLDERS_STATUS
        and not str(path.relative_to(root)).startswith(HOLDERS_LOGS)
    }


def _hold_the_worktree(background: Background, tmp_path: Path) -> int:
    """A run of feature `feat` whose agent hangs; returns ralph's PID once the agent runs."""
    pidfile = tmp_path / "grandchild.pid"
    first = background.ralph(
        "run", "-f", "feat", "-n", "1", "--agent-cmd", agent_cmd("hang_with_grandchild.py", str(pidfile))
    )
    started = wait_until(lambda: read_pid(pidfile) is not None or first.poll() is not None)
    assert started and first.poll() is None, first.communicate(timeout=30) if first.poll() is not None else "no start"
    background.adopt_tree(first.pid)
    return first.pid


def test_a_second_feature_in_the_same_worktree_is_refused_with_a_way_to_run_both(
    project: Path, feature: Path, ralph: RalphRunner, background: Background, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    assert ralph("init", "other").returncode == 0
    write_prd(project / ".ralph" / "other", 1)
    subprocess.run(["git", "add", "-A"], cwd=project, env=ralph_env, check=True)
    subprocess.run(["git", "commit", "-qm", "features"], cwd=project, env=ralph_env, check=True)
    holder = _hold_the_worktree(background, tmp_path)
    before = _tree(project)

    second = ralph("run", "-f", "other", "-n", "1", "--agent-cmd", agent_cmd("say.py", "second"), timeout=60)

    assert second.returncode == 1, second.stdout + second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    line = lines[0]
    assert f"PID {holder}" in line and "feature .ralph/feat" in line, line
    assert "one loop per worktree" in line, line
    assert _tree(project) == before  # refused: nothing written, not even other's status.json

    # The command it prints works when pasted, with the run's own flags: the other feature runs in a worktree of
    # its own meanwhile, on the same agent.
    pasted = line.split("run: ", 1)[1]
    assert pasted.startswith("git worktree add "), pasted
    assert pasted.endswith(
        shlex.join(["ralph", "run", "-f", "other", "-n", "1", "--agent-cmd", agent_cmd("say.py", "second")])
    )
    beside = subprocess.run(
        ["bash", "-c", pasted], check=False, cwd=project, env=ralph_env, capture_output=True, text=True, timeout=120
    )
    assert beside.returncode == 1, beside.stdout + beside.stderr  # 1: max iterations, after a real iteration
    sibling = project.parent / f"{project.name}-other"
    assert "second" in (sibling / ".ralph" / "other" / "logs" / "iteration-1.log").read_text()
    assert read_json(sibling / ".ralph" / "other" / "status.json")["exitReason"] == "max_iterations"
    assert _tree(project) == before  # the first worktree's files untouched by the loop beside it


def test_an_uncommitted_feature_is_told_to_commit_first(
    project: Path, feature: Path, ralph: RalphRunner, background: Background, tmp_path: Path
) -> None:
    assert ralph("init", "other").returncode == 0
    write_prd(project / ".ralph" / "other", 1)
    _hold_the_worktree(background, tmp_path)

    second = ralph("run", "-f", "other", "-n", "1", "--agent-cmd", agent_cmd("say.py", "second"), timeout=60)

    assert second.returncode == 1
    assert "commit .ralph/other (a new worktree starts at HEAD), then run: git worktree add" in second.stderr


def test_the_same_feature_again_is_told_it_is_running(
    project: Path, feature: Path, ralph: RalphRunner, background: Background, tmp_path: Path
) -> None:
    holder = _hold_the_worktree(background, tmp_path)

    again = ralph("run", "-f", "feat", "-n", "1", "--agent-cmd", agent_cmd("say.py", "again"), timeout=60)

    assert again.returncode == 1
    assert (
        again.stderr.strip() == f"ralph: error: ralph run for feat is already running in this worktree (PID {holder})"
    )
