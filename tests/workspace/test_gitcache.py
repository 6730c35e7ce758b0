"""gitcache's reads of .git's own files, against what git itself says, on real repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ralphloop.workspace import gitcache


def git(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def layout(root: Path, env: dict[str, str]) -> gitcache.Layout:
    done = subprocess.run(
        ["git", "rev-parse", *gitcache.LAYOUT_ARGS], cwd=root, env=env, capture_output=True, check=True
    )
    found = gitcache.parse_layout(str(root), done.stdout)
    assert found is not None
    return found


@pytest.fixture
def repo(tmp_path: Path, ralph_env: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, ralph_env, "init", "-q", "-b", "main")
    return root


def test_head_of_a_branch_loose_then_packed(repo: Path, ralph_env: dict[str, str]) -> None:
    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "one")
    assert gitcache.read_head(layout(repo, ralph_env)) == (True, git(repo, ralph_env, "rev-parse", "HEAD"))
    git(repo, ralph_env, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert gitcache.read_head(layout(repo, ralph_env)) == (True, git(repo, ralph_env, "rev-parse", "HEAD"))


def test_head_detached(repo: Path, ralph_env: dict[str, str]) -> None:
    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "one")
    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "two")
    git(repo, ralph_env, "checkout", "-q", "--detach", "HEAD~1")
    assert gitcache.read_head(layout(repo, ralph_env)) == (True, git(repo, ralph_env, "rev-parse", "HEAD"))


def test_head_of_a_branch_not_born_yet_is_left_to_git(repo: Path, ralph_env: dict[str, str]) -> None:
    assert gitcache.read_head(layout(repo, ralph_env)) == (False, None)


def test_head_in_a_linked_worktree(repo: Path, tmp_path: Path, ralph_env: dict[str, str]) -> None:
    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "one")
    linked = tmp_path / "linked"
    git(repo, ralph_env, "worktree", "add", "-q", "-b", "side", str(linked))
    git(linked, ralph_env, "commit", "-q", "--allow-empty", "-m", "on the side")
    found = layout(linked, ralph_env)
    assert found.top == str(linked)
    assert gitcache.read_head(found) == (True, git(linked, ralph_env, "rev-parse", "HEAD"))
    assert gitcache.read_head(found) != gitcache.read_head(layout(repo, ralph_env))


def test_layout_below_the_top(repo: Path, ralph_env: dict[str, str]) -> None:
    (repo / "sub" / "dir").mkdir(parents=True)
    found = layout(repo / "sub" / "dir", ralph_env)
    assert (found.top, found.prefix) == (str(repo), "sub/dir/")
    assert Path(found.user_index).resolve() == repo / ".git" / "index"
    assert Path(found.common_dir).resolve() == repo / ".git"


def test_index_header(repo: Path, tmp_path: Path, ralph_env: dict[str, str]) -> None:
    for name in ("a", "b", "c"):
        (repo / name).write_text(name)
    git(repo, ralph_env, "add", "-A")
    assert gitcache.index_header(str(repo / ".git" / "index")) == (2, 3)
    git(repo, ralph_env, "update-index", "--index-version", "4")
    assert gitcache.index_header(str(repo / ".git" / "index")) == (4, 3)
    (tmp_path / "not-an-index").write_text("DIR")
    assert gitcache.index_header(str(tmp_path / "not-an-index")) is None
    assert gitcache.index_header(str(tmp_path / "missing")) is None


def test_changed_paths_leave_out_the_staged_side() -> None:
    entries = {
        "staged only": "1 M. N... 100644 100644 100644 a b staged only",
        "edited": "1 .M N... 100644 100644 100644 a b edited",
        "both": "1 MM N... 100644 100644 100644 a b both",
        "deleted": "1 .D N... 100644 100644 000000 a b deleted",
        "new": "?",
        "sub/new": "?",
        "other/new": "?",
    }
    assert gitcache.changed_paths(entries, "") == ["edited", "both", "deleted", "new", "sub/new", "other/new"]
    assert gitcache.changed_paths(entries, "sub/") == ["sub/new"]


def _git_says(root: Path, env: dict[str, str], ref: str) -> str | None:
    args = ["git", "rev-parse", "--verify", "-q", f"{ref}^{{commit}}"]
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def test_a_branch_read_from_its_files_is_what_git_says(repo: Path, ralph_env: dict[str, str]) -> None:
    """Loose, packed, packed then moved (loose again), gone and never made: each read as git reads it; what is not
    plainly an id (a symbolic ref, a folder, a FIFO planted there, a reftable repository) is left to git."""
    import os

    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "one")
    common = str(repo / ".git")
    git(repo, ralph_env, "branch", "loops/a")
    git(repo, ralph_env, "branch", "packed")
    git(repo, ralph_env, "pack-refs", "--all")
    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "two")
    git(repo, ralph_env, "branch", "-f", "packed")  # loose again, newer than its packed line
    git(repo, ralph_env, "branch", "fresh")
    git(repo, ralph_env, "branch", "loops/b")  # a loose branch in a folder of branches
    git(repo, ralph_env, "branch", "gone")
    git(repo, ralph_env, "branch", "-D", "gone")
    for name in ("main", "loops/a", "loops/b", "packed", "fresh", "gone", "never", "loops"):
        ref = f"refs/heads/{name}"
        known, commit = gitcache.read_branch(common, ref)
        if name == "loops":  # a folder of branches, no branch: git is asked
            assert not known
            continue
        assert known, name
        assert commit == _git_says(repo, ralph_env, ref), name

    git(repo, ralph_env, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    assert gitcache.read_branch(common, "refs/heads/alias") == (False, None)
    os.mkfifo(repo / ".git" / "refs" / "heads" / "planted")
    assert gitcache.read_branch(common, "refs/heads/planted") == (False, None)  # at once, not waiting on it
    assert gitcache.read_branch(common, "HEAD") == (False, None)  # not a branch
    (repo / ".git" / "reftable").mkdir()
    assert gitcache.read_branch(common, "refs/heads/main") == (False, None)


def test_a_worktrees_head_read_from_its_files_is_what_git_says(
    repo: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """The main worktree, a linked one (its `gitdir:` file and `commondir`), a detached one and a branch yet to be
    born, each as `git rev-parse --verify -q HEAD^{commit}` says; a folder that is no worktree's top is git's."""
    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "one")
    linked, detached = tmp_path / "linked", tmp_path / "detached"
    git(repo, ralph_env, "worktree", "add", "-q", "-b", "side", str(linked))
    git(linked, ralph_env, "commit", "-q", "--allow-empty", "-m", "on the side")
    git(repo, ralph_env, "worktree", "add", "-q", "--detach", str(detached), "HEAD")
    unborn = tmp_path / "unborn"
    git(tmp_path, ralph_env, "init", "-q", "-b", "main", str(unborn))
    for top in (repo, linked, detached, unborn):
        assert gitcache.worktree_head(str(top)) == (True, _git_says(top, ralph_env, "HEAD")), top
    dirs = gitcache.worktree_dirs(str(linked))
    assert dirs is not None
    assert [os.path.realpath(folder) for folder in dirs] == [
        os.path.realpath(git(linked, ralph_env, "rev-parse", "--absolute-git-dir")),
        os.path.realpath(repo / ".git"),
    ]
    (repo / "src").mkdir()
    assert gitcache.worktree_head(str(repo / "src")) == (False, None)


def test_the_worktree_records_read_from_their_files_are_gits(
    repo: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """fleet/gitops: whether git keeps a record of a worktree at a path, read from `<common>/worktrees/*/gitdir`
    (what `git worktree list` reads): a live one, one whose folder was removed by hand, one never made."""
    import shutil

    from ralphloop.fleet import gitops

    git(repo, ralph_env, "commit", "-q", "--allow-empty", "-m", "one")
    assert gitops._recorded(str(repo), str(tmp_path / "never")) is False  # no linked worktree at all yet
    live, gone = tmp_path / "live", tmp_path / "gone"
    for path in (live, gone):
        git(repo, ralph_env, "worktree", "add", "-q", "--detach", str(path), "HEAD")
    shutil.rmtree(gone)  # removed by hand: git still has its record
    listed = {
        os.path.realpath(line.removeprefix("worktree "))
        for line in git(repo, ralph_env, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    }
    for path in (live, gone, tmp_path / "never"):
        assert gitops._recorded(str(repo), str(path)) is (os.path.realpath(path) in listed), path
    gitops._forget(str(repo), str(gone))  # the record dropped, as before
    assert gitops._recorded(str(repo), str(gone)) is False
    assert str(gone) not in git(repo, ralph_env, "worktree", "list", "--porcelain")
