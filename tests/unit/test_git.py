"""parse_status on real `git status --porcelain=v2` output, and changed_files between real snapshots."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ralphloop.git import Snapshot, changed_files, is_repo, parse_status, snapshot

STATUS_ARGS = ("status", "--porcelain=v2", "--branch", "-z", "-uall")


@pytest.fixture
def git_env(ralph_env: dict[str, str]) -> dict[str, str]:
    """The shared test environment (fixed git identity, no user git config), in the C locale."""
    return {**ralph_env, "LC_ALL": "C"}


@pytest.fixture
def repo(tmp_path: Path, git_env: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=git_env, check=True)
    return root


def git(root: Path, env: dict[str, str], *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True).stdout


def status(root: Path, env: dict[str, str]) -> Snapshot:
    return parse_status(git(root, env, *STATUS_ARGS))


def commit_all(root: Path, env: dict[str, str], message: str = "commit") -> str:
    git(root, env, "add", "-A")
    git(root, env, "commit", "-q", "-m", message)
    return git(root, env, "rev-parse", "HEAD").decode().strip()


# ---------------------------------------------------------------- parse_status


def test_initial_repo_has_no_head(repo: Path, git_env: dict[str, str]) -> None:
    snap = status(repo, git_env)
    assert snap.head is None
    assert snap.entries == {}


def test_initial_repo_lists_untracked_files(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "a.txt").write_text("a\n")
    (repo / "dir").mkdir()
    (repo / "dir" / "b.txt").write_text("b\n")
    snap = status(repo, git_env)
    assert snap.head is None
    assert snap.entries == {"a.txt": "?", "dir/b.txt": "?"}


def test_head_is_the_commit(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "a.txt").write_text("a\n")
    head = commit_all(repo, git_env)
    snap = status(repo, git_env)
    assert snap.head == head
    assert snap.entries == {}


def test_modified_staged_untracked_renamed_and_spaces(repo: Path, git_env: dict[str, str]) -> None:
    for name in ("modified.txt", "staged.txt", "old name.txt", "with space.txt", "gone.txt"):
        (repo / name).write_text(f"{name}\n" * 20)
    commit_all(repo, git_env)

    (repo / "modified.txt").write_text("changed\n")
    (repo / "staged.txt").write_text("staged change\n")
    git(repo, git_env, "add", "staged.txt")
    git(repo, git_env, "mv", "old name.txt", "new name.txt")
    (repo / "with space.txt").write_text("edited\n")
    (repo / "gone.txt").unlink()
    (repo / "untracked file.txt").write_text("new\n")
    (repo / "sub dir").mkdir()
    (repo / "sub dir" / "deep file.txt").write_text("deep\n")

    snap = status(repo, git_env)
    assert set(snap.entries) == {
        "modified.txt",
        "staged.txt",
        "new name.txt",
        "with space.txt",
        "gone.txt",
        "untracked file.txt",
        "sub dir/deep file.txt",
    }
    assert snap.entries["modified.txt"].startswith("1 .M ")
    assert snap.entries["staged.txt"].startswith("1 M. ")
    assert snap.entries["new name.txt"].startswith("2 R. ")
    assert snap.entries["with space.txt"].startswith("1 .M ")
    assert snap.entries["gone.txt"].startswith("1 .D ")
    assert snap.entries["untracked file.txt"] == "?"
    assert snap.entries["sub dir/deep file.txt"] == "?"
    # The rename's original path is consumed, not taken for an entry of its own.
    assert "old name.txt" not in snap.entries


def test_rename_followed_by_more_entries(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "a.txt").write_text("content of a\n" * 10)
    (repo / "z.txt").write_text("z\n")
    commit_all(repo, git_env)
    git(repo, git_env, "mv", "a.txt", "b.txt")
    (repo / "z.txt").write_text("zz\n")
    (repo / "untracked.txt").write_text("u\n")
    snap = status(repo, git_env)
    assert set(snap.entries) == {"b.txt", "z.txt", "untracked.txt"}


def test_unusual_file_names(repo: Path, git_env: dict[str, str]) -> None:
    names = ["new\nline.txt", "tab\there.txt", "ünï cödé.txt", 'quote"d.txt', "  leading.txt"]
    for name in names:
        (repo / name).write_text("x\n")
    snap = status(repo, git_env)
    assert set(snap.entries) == set(names)


def test_unmerged_path_is_an_entry(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "conflict file.txt").write_text("base\n")
    commit_all(repo, git_env)
    git(repo, git_env, "checkout", "-q", "-b", "other")
    (repo / "conflict file.txt").write_text("other\n")
    commit_all(repo, git_env)
    git(repo, git_env, "checkout", "-q", "main")
    (repo / "conflict file.txt").write_text("main\n")
    commit_all(repo, git_env)
    merge = subprocess.run(["git", "merge", "-q", "other"], cwd=repo, env=git_env, capture_output=True, check=False)
    assert merge.returncode != 0
    snap = status(repo, git_env)
    assert set(snap.entries) == {"conflict file.txt"}
    assert snap.entries["conflict file.txt"].startswith("u ")


def test_snapshot_outside_a_repository_is_none(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert snapshot(str(outside)) is None
    assert not is_repo(str(outside))


def test_snapshot_matches_parse_status(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "a b.txt").write_text("x\n")
    snap = snapshot(str(repo))
    parsed = status(repo, git_env)
    assert snap is not None
    assert snap.head == parsed.head
    assert snap.entries.keys() == parsed.entries.keys()
    # Each entry is git's record, stamped with the file's size and mtime.
    assert all(snap.entries[path].startswith(record + "|") for path, record in parsed.entries.items())
    assert is_repo(str(repo))


# ---------------------------------------------------------------- changed_files


def test_commit_between_snapshots_lists_committed_files(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "base.txt").write_text("base\n")
    (repo / "edited.txt").write_text("v1\n")
    commit_all(repo, git_env)
    before = snapshot(str(repo))

    (repo / "edited.txt").write_text("v2\n")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "new module.py").write_text("x = 1\n")
    commit_all(repo, git_env)
    after = snapshot(str(repo))

    assert before is not None
    assert after is not None
    assert before.head != after.head
    assert after.entries == {}
    assert changed_files(str(repo), before, after) == ["edited.txt", "pkg/new module.py"]


def test_first_commit_after_an_initial_snapshot_lists_its_files(repo: Path, git_env: dict[str, str]) -> None:
    before = snapshot(str(repo))
    (repo / "a.txt").write_text("a\n")
    (repo / "b.txt").write_text("b\n")
    commit_all(repo, git_env)
    after = snapshot(str(repo))
    assert before is not None
    assert before.head is None
    assert changed_files(str(repo), before, after) == ["a.txt", "b.txt"]


def test_new_untracked_file_is_listed_and_unchanged_dirty_file_is_not(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "dirty.txt").write_text("v1\n")
    (repo / "clean.txt").write_text("c\n")
    commit_all(repo, git_env)
    (repo / "dirty.txt").write_text("dirty before the iteration\n")
    (repo / "old untracked.txt").write_text("here before\n")
    before = snapshot(str(repo))

    (repo / "fresh file.txt").write_text("new\n")
    after = snapshot(str(repo))

    assert changed_files(str(repo), before, after) == ["fresh file.txt"]


def test_dirty_file_committed_between_snapshots_is_listed(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "a.txt").write_text("v1\n")
    (repo / "untouched dirty.txt").write_text("v1\n")
    commit_all(repo, git_env)
    (repo / "a.txt").write_text("v2\n")
    (repo / "untouched dirty.txt").write_text("v2\n")
    before = snapshot(str(repo))

    git(repo, git_env, "commit", "-q", "-m", "only a", "a.txt")
    after = snapshot(str(repo))

    assert changed_files(str(repo), before, after) == ["a.txt"]


def test_staged_and_deleted_between_snapshots_are_listed(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "stage me.txt").write_text("v1\n")
    (repo / "delete me.txt").write_text("v1\n")
    commit_all(repo, git_env)
    before = snapshot(str(repo))

    (repo / "stage me.txt").write_text("v2\n")
    git(repo, git_env, "add", "stage me.txt")
    (repo / "delete me.txt").unlink()
    after = snapshot(str(repo))

    assert changed_files(str(repo), before, after) == ["delete me.txt", "stage me.txt"]


def test_no_change_lists_nothing(repo: Path, git_env: dict[str, str]) -> None:
    (repo / "a.txt").write_text("v1\n")
    commit_all(repo, git_env)
    (repo / "a.txt").write_text("dirty\n")
    before = snapshot(str(repo))
    after = snapshot(str(repo))
    assert changed_files(str(repo), before, after) == []


def test_missing_snapshot_lists_nothing(repo: Path) -> None:
    snap = snapshot(str(repo))
    assert changed_files(str(repo), None, snap) == []
    assert changed_files(str(repo), snap, None) == []


def test_dirty_file_edited_again_between_snapshots_is_listed(repo: Path, git_env: dict[str, str]) -> None:
    """A file already dirty before the iteration and edited during it has changed between the two.

    The porcelain records of both snapshots are identical (they carry no worktree hash), so a
    comparison of records alone misses this edit.
    """
    (repo / "notes.txt").write_text("v1\n")
    commit_all(repo, git_env)
    (repo / "notes.txt").write_text("dirty before\n")
    (repo / "scratch.txt").write_text("untracked before\n")
    before = snapshot(str(repo))

    (repo / "notes.txt").write_text("edited by the agent\n")
    (repo / "scratch.txt").write_text("edited by the agent too\n")
    after = snapshot(str(repo))

    assert changed_files(str(repo), before, after) == ["notes.txt", "scratch.txt"]
