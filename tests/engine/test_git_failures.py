"""git failing under ralph never blinds it: a stale `.git/index.lock` or private `.git/ralph/<feature>.index.lock`
(left by a killed git command; no git process runs in the repository) is removed, and said; a lock a live git
process holds is left alone, and the loop stops naming it; a capture or a commit git refuses stops the loop with
git's reason once the iteration is recorded, rather than carry on half blind ("0 files changed").

In-process runs built as `ralph run` builds them (harness.py), real git, the agent's turns (its git commands
included, harness_git.py) played back; the "killed git command" is the lock file it leaves. A stale lock found
before the run, said by the real `ralph run`, is tests/integration/test_git_failures.py's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import read_json
from tests.engine.harness import Turn, Turns, git_out, run
from tests.engine.harness_git import GitTurn
from tests.engine.test_reports_true import prepared
from tests.integration.helpers import entry_fields, entry_files, progress_entries

PRIVATE_LOCK = ".git/ralph/feat.index.lock"
USER_LOCK = ".git/index.lock"
FAILING = Turn(write={"src/failed.py": "failed = 1\n"}, err="Error: tests failed\n", exit=1)
PASS_S1 = Turn(write={"src/ok.py": "ok = True\n"}, passes=["S-1"])
AUTO_COMMIT = "git:\n  auto_commit: true\n"


def killed(lock: str) -> Turn:
    """The failing attempt, whose git was killed holding `lock` (a timeout, say)."""
    return Turn(write={**FAILING.write, lock: ""}, err=FAILING.err, exit=FAILING.exit)


def entries(folder: Path) -> list[str]:
    return progress_entries((folder / "progress.txt").read_text())


def assert_failed_attempt_undone_then_work_committed(project: Path, folder: Path) -> None:
    """Iteration 1 failed and was undone; iteration 2 passed S-1 and ralph committed exactly its work."""
    first, second = entries(folder)
    assert "then undone" in entry_fields(first)["Note"], first
    assert entry_files(second) == [".ralph/feat/prd.json", "src/ok.py"], second
    assert not (project / "src" / "failed.py").exists()
    committed = git_out(project, "show", "--name-only", "--format=%s", "HEAD").split("\n")
    assert committed[0] == "S-1: Story 1" and "src/ok.py" in committed, committed
    assert git_out(project, "status", "--porcelain", "--untracked-files=all", "--", "src").strip() == ""


# The agent's git killed holding the user's index lock, or ralph's private one (a lock made mid-run): either is
# removed and said, hides none of the failed attempt's changes, and stops neither the undo nor the retry.
@pytest.mark.parametrize("lock", [USER_LOCK, PRIVATE_LOCK], ids=["users-index", "private-index"])
def test_a_stale_lock_left_by_the_agent_neither_hides_changes_nor_stops_the_undo(
    lock: str, project: Path, home: Path
) -> None:
    folder = prepared(project, 2, AUTO_COMMIT)

    done = run(project, Turns(killed(lock), PASS_S1), n=2)

    out = done.screen
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations", out
    assert "stale" in out and lock in out, out
    assert not (project / lock).exists()
    assert entry_files(entries(folder)[0]) == ["src/failed.py"], out
    assert_failed_attempt_undone_then_work_committed(project, folder)


def test_a_stale_lock_on_the_private_index_before_the_run_is_removed_and_said(project: Path, home: Path) -> None:
    folder = prepared(project, 2, AUTO_COMMIT)
    (project / ".git" / "ralph").mkdir()
    (project / PRIVATE_LOCK).write_text("")  # ralph killed during one of its git commands

    done = run(project, Turns(PASS_S1), n=1)

    out = done.screen
    assert "stale" in out and PRIVATE_LOCK in out, out
    assert not (project / PRIVATE_LOCK).exists()
    (entry,) = entries(folder)
    assert entry_files(entry) == [".ralph/feat/prd.json", "src/ok.py"], entry


def test_a_lock_held_by_a_live_git_process_is_left_and_the_run_stops_naming_it(project: Path, home: Path) -> None:
    folder = prepared(project, 2, AUTO_COMMIT)
    # A git process that lives in the repository for the whole run (it waits on its stdin): whoever holds the
    # lock the agent leaves, ralph cannot tell it is stale, so it must not remove it.
    holder = subprocess.Popen(
        ["git", "cat-file", "--batch"], cwd=project, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    try:
        done = run(project, Turns(killed(USER_LOCK), PASS_S1), n=2)
    finally:
        holder.kill()
        holder.wait()
    out = done.screen
    assert done.outcome.reason.exit_code == 1 and "Traceback" not in out, out
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "error", status
    message = status["exitMessage"]
    assert USER_LOCK in message and f"pid {holder.pid}" in message, message
    assert "refs/ralph/attempts/feat/iteration-1" in message, message
    assert (project / USER_LOCK).exists()
    assert not (folder / "logs" / "iteration-2.log").exists()  # no retry on top of the failed attempt


def test_git_failing_to_capture_the_workspace_stops_the_run_instead_of_counting_nothing(
    project: Path, home: Path
) -> None:
    folder = prepared(project, 2, AUTO_COMMIT)
    # The agent breaks the repository's object store: git can no longer write the capture's objects.
    breaks = GitTurn(PASS_S1, git=[["config", "core.sharedRepository", "nonsense"]])

    done = run(project, Turns(breaks, Turn(passes=["S-2"])), n=2)

    out = done.screen
    assert done.outcome.reason.exit_code == 1 and "Traceback" not in out, out
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "error" and "git" in status["exitMessage"], status
    (entry,) = entries(folder)
    assert "git" in entry_fields(entry)["Note"], entry
    assert not (folder / "logs" / "iteration-2.log").exists()


def test_a_refused_auto_commit_stops_the_run_instead_of_leaving_the_work_uncommitted_for_good(
    project: Path, home: Path
) -> None:
    folder = prepared(project, 2, AUTO_COMMIT)
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: src/ok.py is not formatted' >&2\nexit 1\n")
    hook.chmod(0o755)

    done = run(project, Turns(PASS_S1, Turn(passes=["S-2"])), n=2)

    out = done.screen
    assert done.outcome.reason.exit_code == 1 and "Traceback" not in out, out
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "error", status
    assert "auto-commit of iteration 1 failed" in status["exitMessage"], status
    assert "src/ok.py is not formatted" in status["exitMessage"], status
    (entry,) = entries(folder)  # recorded, then stopped
    assert entry_fields(entry)["Status"] == "complete", entry
    assert (project / "src" / "ok.py").exists()  # the work stays, uncommitted, for the user
    assert git_out(project, "log", "--format=%s", "-1").strip() == "plan"
    assert not (folder / "logs" / "iteration-2.log").exists()
