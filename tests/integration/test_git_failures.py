"""git failing under ralph never blinds it: a stale `.git/index.lock` or private `.git/ralph/<feature>.index.lock`
(left by a killed git command; no git process runs in the repository) is removed, and said; a lock a live git
process holds is left alone, and the loop stops naming it; a capture or a commit git refuses stops the loop with
git's reason once the iteration is recorded, rather than carry on half blind ("0 files changed").

Real `ralph run`, real git, tests/agents/step_agent.py; the "killed git command" is the lock file it leaves.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, agent_cmd, read_json, write_prd
from tests.integration.helpers import entry_fields, entry_files, git, progress_entries

PRIVATE_LOCK = ".git/ralph/feat.index.lock"
USER_LOCK = ".git/index.lock"
FAILING = {"write": {"src/failed.py": "failed = 1\n"}, "say_err": "Error: tests failed", "exit": 1}


def prepared(project: Path, env: dict[str, str], ralph: RalphRunner) -> Path:
    """.ralph/feat with two open stories and auto-commit on, all committed."""
    assert ralph("init", "feat").returncode == 0
    folder = project / ".ralph" / "feat"
    write_prd(folder, 2)
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: true\n")
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "plan")
    return folder


def steps(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def entries(folder: Path) -> list[str]:
    return progress_entries((folder / "progress.txt").read_text())


def assert_failed_attempt_undone_then_work_committed(project: Path, env: dict[str, str], folder: Path) -> None:
    """Iteration 1 failed and was undone; iteration 2 passed S-1 and ralph committed exactly its work."""
    first, second = entries(folder)
    assert "then undone" in entry_fields(first)["Note"], first
    assert entry_files(second) == [".ralph/feat/prd.json", "src/ok.py"], second
    assert not (project / "src" / "failed.py").exists()
    committed = git(project, env, "show", "--name-only", "--format=%s", "HEAD").split("\n")
    assert committed[0] == "S-1: Story 1" and "src/ok.py" in committed, committed
    assert git(project, env, "status", "--porcelain", "--untracked-files=all", "--", "src").strip() == ""


PLAN_FAIL_THEN_PASS = {"2": {"write": {"src/ok.py": "ok = True\n"}, "pass": ["S-1"]}}


def test_a_stale_lock_on_the_users_index_before_the_run_is_removed_and_said(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    (project / USER_LOCK).write_text("")  # a `git commit` killed half-way, before the run

    done = ralph("run", "-n", "2", "--agent-cmd", steps(tmp_path, {"1": FAILING, **PLAN_FAIL_THEN_PASS}))

    out = done.stdout + done.stderr
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations", out
    assert "stale" in done.stdout and USER_LOCK in done.stdout, out
    assert not (project / USER_LOCK).exists()
    assert git(project, ralph_env, "symbolic-ref", "--short", "HEAD").strip() == "feature/feat"
    assert_failed_attempt_undone_then_work_committed(project, ralph_env, folder)


def test_a_stale_lock_on_the_users_index_left_by_the_agent_is_removed_before_the_undo(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    killed = {**FAILING, "write": {**FAILING["write"], USER_LOCK: ""}}  # the agent's git killed (a timeout, say)

    done = ralph("run", "-n", "2", "--agent-cmd", steps(tmp_path, {"1": killed, **PLAN_FAIL_THEN_PASS}))

    out = done.stdout + done.stderr
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations", out
    assert "stale" in done.stdout and USER_LOCK in done.stdout, out
    assert not (project / USER_LOCK).exists()
    assert_failed_attempt_undone_then_work_committed(project, ralph_env, folder)


def test_a_stale_lock_on_the_private_index_before_the_run_is_removed_and_said(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    (project / ".git" / "ralph").mkdir()
    (project / PRIVATE_LOCK).write_text("")  # ralph killed during one of its git commands
    plan = {"1": {"write": {"src/ok.py": "ok = True\n"}, "pass": ["S-1"]}}

    done = ralph("run", "-n", "1", "--agent-cmd", steps(tmp_path, plan))

    out = done.stdout + done.stderr
    assert "stale" in done.stdout and PRIVATE_LOCK in done.stdout, out
    assert not (project / PRIVATE_LOCK).exists()
    (entry,) = entries(folder)
    assert entry_files(entry) == [".ralph/feat/prd.json", "src/ok.py"], entry


def test_a_stale_lock_on_the_private_index_made_mid_run_neither_hides_changes_nor_stops_the_undo(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    killed = {**FAILING, "write": {**FAILING["write"], PRIVATE_LOCK: ""}}

    done = ralph("run", "-n", "2", "--agent-cmd", steps(tmp_path, {"1": killed, **PLAN_FAIL_THEN_PASS}))

    out = done.stdout + done.stderr
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations", out
    assert "stale" in done.stdout and PRIVATE_LOCK in done.stdout, out
    assert entry_files(entries(folder)[0]) == ["src/failed.py"], out
    assert_failed_attempt_undone_then_work_committed(project, ralph_env, folder)


def test_a_lock_held_by_a_live_git_process_is_left_and_the_run_stops_naming_it(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    # A git process that lives in the repository for the whole run (it waits on its stdin): whoever holds the
    # lock the agent leaves, ralph cannot tell it is stale, so it must not remove it.
    holder = subprocess.Popen(
        ["git", "cat-file", "--batch"], cwd=project, env=ralph_env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    try:
        killed = {**FAILING, "write": {**FAILING["write"], USER_LOCK: ""}}
        done = ralph("run", "-n", "2", "--agent-cmd", steps(tmp_path, {"1": killed, **PLAN_FAIL_THEN_PASS}))
    finally:
        holder.kill()
        holder.wait()
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out, out
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "error", status
    message = status["exitMessage"]
    assert USER_LOCK in message and f"pid {holder.pid}" in message, message
    assert "refs/ralph/attempts/feat/iteration-1" in message, message
    assert (project / USER_LOCK).exists()
    assert not (folder / "logs" / "iteration-2.log").exists()  # no retry on top of the failed attempt


def test_git_failing_to_capture_the_workspace_stops_the_run_instead_of_counting_nothing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    # The agent breaks the repository's object store: git can no longer write the capture's objects.
    plan = {
        "1": {
            "write": {"src/ok.py": "ok = True\n"},
            "git": [["config", "core.sharedRepository", "nonsense"]],
            "pass": ["S-1"],
        },
        "2": {"pass": ["S-2"]},
    }

    done = ralph("run", "-n", "2", "--agent-cmd", steps(tmp_path, plan))

    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out, out
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "error" and "git" in status["exitMessage"], status
    (entry,) = entries(folder)
    assert "git" in entry_fields(entry)["Note"], entry
    assert not (folder / "logs" / "iteration-2.log").exists()


def test_a_refused_auto_commit_stops_the_run_instead_of_leaving_the_work_uncommitted_for_good(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: src/ok.py is not formatted' >&2\nexit 1\n")
    hook.chmod(0o755)
    plan = {"1": {"write": {"src/ok.py": "ok = True\n"}, "pass": ["S-1"]}, "2": {"pass": ["S-2"]}}

    done = ralph("run", "-n", "2", "--agent-cmd", steps(tmp_path, plan))

    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out, out
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "error", status
    assert "auto-commit of iteration 1 failed" in status["exitMessage"], status
    assert "src/ok.py is not formatted" in status["exitMessage"], status
    (entry,) = entries(folder)  # recorded, then stopped
    assert entry_fields(entry)["Status"] == "complete", entry
    assert (project / "src" / "ok.py").exists()  # the work stays, uncommitted, for the user
    assert git(project, ralph_env, "log", "--format=%s", "-1").strip() == "plan"
    assert not (folder / "logs" / "iteration-2.log").exists()
