"""gitlocks.clear_stale with real processes: a lock no git process can hold is removed; one that a live git
process working in the repository may hold is left, with that process named."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralphloop.workspace.gitlocks import clear_stale


@pytest.fixture
def repo(tmp_path: Path, ralph_env: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, env=ralph_env, check=True)
    return root


def git_waiting_in(folder: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A git process that stays alive, working in `folder`, until the test ends (it waits on its stdin)."""
    process = subprocess.Popen(["git", "cat-file", "--batch"], cwd=folder, env=env, stdin=subprocess.PIPE)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_no_lock_is_nothing_to_do(repo: Path) -> None:
    found = clear_stale([str(repo / ".git" / "index.lock")], [str(repo)])
    assert (found.removed, found.held, found.holder) == ((), (), None)


def test_a_lock_no_git_process_holds_is_removed(repo: Path) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    found = clear_stale([str(lock), str(repo / ".git" / "HEAD.lock")], [str(repo), str(repo / ".git")])
    assert found.removed == (str(lock),) and found.held == ()
    assert not lock.exists()


def test_a_lock_is_left_while_a_git_process_works_in_the_repository(
    repo: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    (repo / "sub").mkdir()
    for holder in git_waiting_in(repo / "sub", ralph_env):
        found = clear_stale([str(lock)], [str(repo), str(repo / ".git")])
        assert found.held == (str(lock),) and found.holder == holder.pid and found.removed == ()
    assert lock.exists()


def test_a_git_process_in_another_repository_holds_nothing_here(
    repo: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=elsewhere, env=ralph_env, check=True)
    for _ in git_waiting_in(elsewhere, ralph_env):
        found = clear_stale([str(lock)], [str(repo), str(repo / ".git")])
        assert found.removed == (str(lock),)
    assert not lock.exists()


def test_a_private_index_lock_goes_while_other_git_processes_work_in_the_repository(
    repo: Path, ralph_env: dict[str, str]
) -> None:
    index = repo / ".git" / "ralph" / "feat.index"
    index.parent.mkdir()
    private, shared = Path(f"{index}.lock"), repo / ".git" / "index.lock"
    private.write_text("")
    shared.write_text("")
    for holder in git_waiting_in(repo, ralph_env):  # no GIT_INDEX_FILE: it cannot have made the private lock
        found = clear_stale([str(private), str(shared)], [str(repo), str(repo / ".git")], {str(private): str(index)})
        assert found.removed == (str(private),) and found.held == (str(shared),) and found.holder == holder.pid
    assert not private.exists() and shared.exists()


def test_a_private_index_lock_stays_while_a_git_naming_that_index_runs_anywhere(
    repo: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    index = repo / ".git" / "ralph" / "feat.index"
    index.parent.mkdir()
    private = Path(f"{index}.lock")
    private.write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=elsewhere, env=ralph_env, check=True)
    named = os.path.relpath(index, elsewhere)  # as the process's own folder resolves it
    for holder in git_waiting_in(elsewhere, {**ralph_env, "GIT_INDEX_FILE": named}):
        found = clear_stale([str(private)], [str(repo), str(repo / ".git")], {str(private): str(index)})
        assert found.held == (str(private),) and found.holder == holder.pid and found.removed == ()
    assert private.exists()
