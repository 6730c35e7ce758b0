"""parse_status on real `git status --porcelain=v2` output (what the git preflight reads)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ralphloop.workspace.git import Snapshot, commit_paths, is_repo, parse_status, reason

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


def test_outside_a_repository_is_not_one(tmp_path: Path, repo: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert not is_repo(str(outside))
    assert is_repo(str(repo))


def test_commit_paths_stages_a_deletion_the_index_no_longer_holds(repo: Path, git_env: dict[str, str]) -> None:
    """An agent's own `git rm` (or reset) already took the file out of the index: the commit still goes through."""
    git(repo, git_env, "config", "user.name", "T")
    git(repo, git_env, "config", "user.email", "t@t.invalid")
    (repo / "gone.txt").write_text("soon gone\n")
    (repo / "kept.txt").write_text("v1\n")
    commit_all(repo, git_env)
    git(repo, git_env, "rm", "-q", "gone.txt")
    git(repo, git_env, "commit", "-q", "-m", "the agent's own commit")
    (repo / "kept.txt").write_text("v2\n")
    (repo / "vanished.txt").write_text("never committed\n")
    (repo / "vanished.txt").unlink()

    made = commit_paths(str(repo), ["gone.txt", "kept.txt", "vanished.txt"], "ralph's commit")

    assert made == git(repo, git_env, "rev-parse", "HEAD").decode().strip()
    assert git(repo, git_env, "show", "--name-only", "--format=", "HEAD").decode().split() == ["kept.txt"]


@pytest.mark.parametrize("hooks", [True, False], ids=["asked-first", "found-by-the-commit"])
def test_commit_paths_of_work_the_agent_committed_itself_makes_no_commit(
    repo: Path, git_env: dict[str, str], hooks: bool
) -> None:
    """Nothing left to stage: no commit and no error, whether git is asked first or `git commit` finds it out; a
    commit git refuses for another reason still raises, with the paths unstaged again."""
    git(repo, git_env, "config", "user.name", "T")
    git(repo, git_env, "config", "user.email", "t@t.invalid")
    (repo / "work.txt").write_text("done\n")
    commit_all(repo, git_env)
    head = git(repo, git_env, "rev-parse", "HEAD")

    assert commit_paths(str(repo), ["work.txt"], "ralph's commit", hooks=hooks) is None
    assert git(repo, git_env, "rev-parse", "HEAD") == head

    (repo / "work.txt").write_text("more\n")
    git(repo, git_env, "config", "commit.gpgSign", "true")  # a signature git cannot make
    git(repo, git_env, "config", "gpg.program", "false")
    with pytest.raises(OSError, match="git commit failed"):
        commit_paths(str(repo), ["work.txt"], "ralph's commit", hooks=hooks)
    assert git(repo, git_env, "diff", "--cached", "--name-only") == b""


def test_commit_paths_of_tracked_files_stages_them_as_it_commits(repo: Path, git_env: dict[str, str]) -> None:
    """`tracked`: every path is in the staging area, so one `git commit --include` stages and commits them, an
    edit and a deletion alike; other work of the user's stays uncommitted, and a refusal is said as before."""
    git(repo, git_env, "config", "user.name", "T")
    git(repo, git_env, "config", "user.email", "t@t.invalid")
    for name in ("edited.txt", "deleted.txt", "mine.txt"):
        (repo / name).write_text("v1\n")
    commit_all(repo, git_env)
    (repo / "edited.txt").write_text("v2\n")
    (repo / "deleted.txt").unlink()
    (repo / "mine.txt").write_text("the user's, not staged\n")

    made = commit_paths(str(repo), ["deleted.txt", "edited.txt"], "ralph's commit", hooks=False, tracked=True)

    assert made == git(repo, git_env, "rev-parse", "HEAD").decode().strip()
    assert git(repo, git_env, "show", "--name-only", "--format=", "HEAD").decode().split() == [
        "deleted.txt",
        "edited.txt",
    ]
    assert git(repo, git_env, "status", "--porcelain").decode().splitlines() == [" M mine.txt"]
    assert commit_paths(str(repo), ["edited.txt"], "again", hooks=False, tracked=True) is None

    (repo / "edited.txt").write_text("v3\n")
    git(repo, git_env, "config", "commit.gpgSign", "true")
    git(repo, git_env, "config", "gpg.program", "false")
    with pytest.raises(OSError, match="git commit failed"):
        commit_paths(str(repo), ["edited.txt"], "refused", hooks=False, tracked=True)
    assert git(repo, git_env, "diff", "--cached", "--name-only") == b""


def test_the_reason_of_a_git_failure_is_its_error_line_not_its_advice(repo: Path, git_env: dict[str, str]) -> None:
    (repo / ".git" / "index.lock").write_text("")
    (repo / "a.txt").write_text("a\n")
    done = subprocess.run(["git", "add", "a.txt"], cwd=repo, env=git_env, capture_output=True, check=False)
    assert done.returncode != 0
    said = reason(done)
    assert said.startswith("fatal: Unable to create") and "index.lock" in said, said


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab0_-./@{}~^:?*[\\ HEADlock", min_size=1, max_size=12))
def test_a_branch_name_taken_without_git_is_one_git_takes(name: str) -> None:
    """valid_branch_name (and the branch reads of gitcache) answer plain names themselves: each they take,
    `git check-ref-format --branch` takes too."""
    from ralphloop.workspace import gitcache

    if gitcache.plain_branch(name):
        done = subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True, check=False)
        assert done.returncode == 0, name


@pytest.mark.parametrize("hooks", [True, False], ids=["with-hooks", "include"])
def test_git_keeps_the_repository_on_one_commit_of_ralphs_in_every_maintain_every(
    repo: Path, git_env: dict[str, str], hooks: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git commit` looks for maintenance to do after each commit, in a process of its own; ralph's commits let it
    on one commit in MAINTAIN_EVERY (whichever of the process's commits these are), and the commits are made."""
    from ralphloop.workspace.git import MAINTAIN_EVERY

    git(repo, git_env, "config", "user.name", "T")
    git(repo, git_env, "config", "user.email", "t@t.invalid")
    (repo / "work.txt").write_text("0\n")
    commit_all(repo, git_env)
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))  # every git process, the ones git itself starts too
    for number in range(1, 2 * MAINTAIN_EVERY + 1):
        (repo / "work.txt").write_text(f"{number}\n")
        assert commit_paths(str(repo), ["work.txt"], f"commit {number}", hooks=hooks, tracked=not hooks)

    starts = [line for line in trace.read_text().splitlines() if '"event":"start"' in line]
    assert sum('"maintenance"' in line for line in starts) == 2, "maintenance ran on other than 1 commit in 25"
    assert git(repo, git_env, "rev-list", "--count", "HEAD").strip() == str(2 * MAINTAIN_EVERY + 1).encode()
