"""git failing under ralph never blinds it, at the CLI's edge: a stale `.git/index.lock` (left by a killed git
command before the run; no git process runs in the repository) is removed and said by the real `ralph run` (real
git, tests/agents/step_agent.py), the failed attempt undone and the next one's work committed. The other cases (a
lock the agent leaves, the private index's lock, a lock a live git process holds, a capture or a commit git refuses)
are tests/engine/test_git_failures.py's, in-process.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.engine.test_git_failures import AUTO_COMMIT, USER_LOCK, assert_failed_attempt_undone_then_work_committed
from tests.integration.helpers import git
from tests.integration.test_reports_true import plan, prepared

FAILING = {"write": {"src/failed.py": "failed = 1\n"}, "say_err": "Error: tests failed", "exit": 1}


PLAN_FAIL_THEN_PASS = {"2": {"write": {"src/ok.py": "ok = True\n"}, "pass": ["S-1"]}}


def test_a_stale_lock_on_the_users_index_before_the_run_is_removed_and_said(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 2, AUTO_COMMIT)
    (project / USER_LOCK).write_text("")  # a `git commit` killed half-way, before the run

    done = ralph("run", "-n", "2", "--agent-cmd", plan(tmp_path, {"1": FAILING, **PLAN_FAIL_THEN_PASS}))

    out = done.stdout + done.stderr
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations", out
    assert "stale" in done.stdout and USER_LOCK in done.stdout, out
    assert not (project / USER_LOCK).exists()
    assert git(project, ralph_env, "symbolic-ref", "--short", "HEAD").strip() == "feature/feat"
    assert_failed_attempt_undone_then_work_committed(project, folder)


def test_ralphs_own_git_runs_no_hook_and_no_fsmonitor_the_agent_planted(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """The agent plants hooks (reference-transaction runs on every ref ralph moves, as when it saves a failed
    attempt) and an fsmonitor program (git status and add run it), then fails: ralph saves the attempt, undoes it
    and stops, and none of that code ran."""
    folder = prepared(project, ralph_env, ralph, 1, AUTO_COMMIT)
    marker = tmp_path / "ran.txt"

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("plant_git_code.py", str(marker)))

    assert read_json(folder / "status.json")["exitReason"] == "max_iterations", done.stdout + done.stderr
    saved = git(project, ralph_env, "for-each-ref", "--format=%(refname)", "refs/ralph/attempts/")
    assert saved.strip(), "the failed attempt was saved (a ref moved: reference-transaction's chance to run)"
    assert not marker.exists(), marker.read_text()
