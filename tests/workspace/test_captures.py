"""captures.capture on real git repositories: a capture that reuses what the last one learnt (the private
index, its untracked cache, the user's index tree) holds exactly what a capture from scratch holds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ralphloop.workspace import captures, gitcache, undo
from ralphloop.workspace.captures import WorkTree

Step = Callable[[Path], None]


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Committed repositories, made once: a small one, and a big one with enough files for captures to
    start with `git status`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@t.invalid", GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@t.invalid"
    )
    made = {}
    for size in ("small", "big"):
        root = tmp_path_factory.mktemp(size) / "repo"
        (root / "src").mkdir(parents=True)
        for number in range(gitcache.STATUS_FROM if size == "big" else 0):
            folder = root / "lib" / f"pkg{number // 100}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"m{number}.py").write_text(f"{number}\n")
        (root / "src" / "a.py").write_text("a = 1\n")
        (root / "src" / "b.py").write_text("b = 1\n")
        (root / "README").write_text("readme\n")
        (root / ".gitignore").write_text("*.log\nbuild/\n")
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"], ["repack", "-adq"]):
            subprocess.run(["git", *args], cwd=root, env=env, check=True)  # one pack: quicker to copy
        made[size] = root
    return made


@pytest.fixture(params=["small", "big"])
def repo(request: pytest.FixtureRequest, templates: dict[str, Path], tmp_path: Path) -> Path:
    """A copy of a template repository (a "big" one makes captures take their `git status` path)."""
    return Path(shutil.copytree(templates[request.param], tmp_path / "repo", symlinks=True))


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def fresh(root: Path, tmp_path: Path, count: list[int]) -> WorkTree | None:
    """A capture through a new private index: the plain `git add -A` of every file, nothing reused."""
    count[0] += 1
    return captures.capture(str(root), str(tmp_path / f"fresh-{count[0]}.index"))


def write(path: str, text: str) -> Step:
    return lambda root: (root / path).parent.mkdir(parents=True, exist_ok=True) or (root / path).write_text(text)


def append(path: str, text: str) -> Step:
    def step(root: Path) -> None:
        with open(root / path, "a", encoding="utf-8") as handle:
            handle.write(text)

    return step


def remove(path: str) -> Step:
    return lambda root: (root / path).unlink()


def chmod_x(path: str) -> Step:
    return lambda root: os.chmod(root / path, 0o755)


STEPS: list[tuple[str, Step]] = [
    ("nothing", lambda root: None),
    ("a new file in a new folder", write("pkg/deep/new.py", "new\n")),
    ("another file in that folder", write("pkg/deep/second.py", "second\n")),
    ("a tracked file edited", append("src/a.py", "a = 2\n")),
    ("the same file edited again, same size", write("src/a.py", "a = 3\na = 4\n")),
    ("a tracked file deleted", remove("src/b.py")),
    ("an untracked file deleted", remove("pkg/deep/second.py")),
    ("an ignored file", write("debug.log", "noise\n")),
    ("a file in an ignored folder", write("build/out.bin", "bin\n")),
    ("the ignore rule dropped", write(".gitignore", "build/\n")),
    ("a file made executable", chmod_x("src/a.py")),
    ("a staged change", lambda root: (root / "README").write_text("staged\n") or git(root, "add", "README")),
    ("a commit", lambda root: git(root, "commit", "-q", "-am", "agent commit") and None),
    ("an empty folder", lambda root: (root / "empty").mkdir()),
    ("a file with an unusual name", write("we ird\tname.txt", "x\n")),
    ("nothing again", lambda root: None),
]

# Steps after which the files hold what they held: a commit moves HEAD, not the content.
SAME_CONTENT = {
    "nothing",
    "an ignored file",
    "a file in an ignored folder",
    "a commit",
    "an empty folder",
    "nothing again",
}


def test_each_capture_equals_a_capture_from_scratch(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    count = [0]
    previous = captures.capture(str(repo), index)
    for label, step in STEPS:
        step(repo)
        kept = captures.capture(str(repo), index)
        assert kept is not None, label
        assert kept == fresh(repo, tmp_path, count), label
        changed = captures.changed_between(str(repo), previous, kept) if previous else []
        assert (changed == []) == (label in SAME_CONTENT), label
        previous = kept


def test_the_tree_follows_head_and_the_staging_area(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    before = captures.capture(str(repo), index)
    (repo / "README").write_text("staged\n")
    git(repo, "add", "README")
    staged = captures.capture(str(repo), index)
    git(repo, "commit", "-q", "-m", "second")
    committed = captures.capture(str(repo), index)
    assert before is not None and staged is not None and committed is not None
    assert before.head == staged.head != committed.head == git(repo, "rev-parse", "HEAD")
    assert staged.tree == committed.tree != before.tree
    assert before.index_tree == before.tree
    assert staged.index_tree == committed.index_tree == committed.tree


def test_below_the_top_only_the_project_folder_is_captured(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    project = repo / "src"
    first = captures.capture(str(project), index)
    (repo / "outside.txt").write_text("not ours\n")
    (project / "inside.txt").write_text("ours\n")
    second = captures.capture(str(project), index)
    assert first is not None and second is not None
    assert captures.changed_between(str(project), first, second) == ["src/inside.txt"]
    assert second == captures.capture(str(project), str(tmp_path / "fresh.index"))


def test_the_untracked_cache_is_kept_in_the_private_index(repo: Path, tmp_path: Path) -> None:
    index = tmp_path / "private.index"
    for _ in range(3):
        (repo / "new.txt").write_text("new\n")
        captures.capture(str(repo), str(index))
    # git's untracked-cache extension, with a folder in it (an empty cache is a few bytes)
    assert b"UNTR" in index.read_bytes()
    assert len(index.read_bytes().partition(b"UNTR")[2]) > 100
    assert b"UNTR" not in (repo / ".git" / "index").read_bytes()  # the user's index is left as it was


def test_a_conflicted_staging_area_has_no_tree(templates: dict[str, Path], tmp_path: Path) -> None:
    repo = Path(shutil.copytree(templates["small"], tmp_path / "repo"))
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README").write_text("other\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "README").write_text("main\n")
    git(repo, "commit", "-q", "-am", "main")
    subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True, check=False)
    index = str(tmp_path / "private.index")
    for _ in range(2):  # the second time from what the first one learnt
        conflicted = captures.capture(str(repo), index)
        assert conflicted is not None
        assert conflicted.index_tree is None


SHIM = """#!/bin/sh
echo "$*" >> "$GIT_CALLS"
exec {git} "$@"
"""


def test_a_capture_with_nothing_changed_runs_one_git_process(repo: Path, tmp_path: Path) -> None:
    """What makes an iteration cheap: `git status` alone, the rest from memory (the first capture into a private
    index adds every file)."""
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(SHIM.format(git=shutil.which("git")))
    shim.chmod(0o755)
    calls = tmp_path / "calls.txt"
    script = textwrap.dedent(
        """
        import os, sys
        from ralphloop.workspace import captures
        from ralphloop.workspace import gitcache
        index = captures.scratch_index(sys.argv[1], "feat")
        first = captures.capture(sys.argv[1], index)
        open(os.environ["GIT_CALLS"], "a").write("--\\n")
        assert captures.capture(sys.argv[1], index) == first
        """
    )
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}", "GIT_CALLS": str(calls)}
    subprocess.run([sys.executable, "-c", script, str(repo)], env=env, check=True)
    first, second = (part.splitlines() for part in calls.read_text().split("--\n"))
    assert len(second) == 1
    assert " status " in f" {second[0]} "
    assert any(" add " in f" {call} " for call in first)  # a new private index: every file added


def test_recapture_of_the_paths_ralph_wrote_equals_a_full_capture(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    first = captures.capture(str(repo), index)
    with open(repo / "README", "a", encoding="utf-8") as handle:
        handle.write("a progress entry\n")
    (repo / "notes").mkdir()
    (repo / "notes" / "new.md").write_text("new\n")
    (repo / "debug.log").write_text("ignored\n")
    written = [str(repo / "README"), "notes/new.md", "debug.log", str(tmp_path / "outside.txt")]
    assert first is not None
    again = captures.recapture(str(repo), index, first, written)
    assert again is not None
    assert again == fresh(repo, tmp_path, [0])
    assert captures.changed_between(str(repo), first, again) == ["README", "notes/new.md"]
    assert captures.recapture(str(repo), index, again, []) == again


def test_recapture_from_a_capture_the_index_no_longer_holds_looks_at_everything(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    first = captures.capture(str(repo), index)
    (repo / "agent.txt").write_text("written by someone else\n")
    second = captures.capture(str(repo), index)
    (repo / "later.txt").write_text("also not ralph's\n")
    assert first is not None and second is not None
    again = captures.recapture(str(repo), index, first, [])  # the index holds `second`, not `first`
    assert again == fresh(repo, tmp_path, [0])


def test_a_private_index_git_cannot_read_is_made_again(repo: Path, tmp_path: Path) -> None:
    """A damaged private index, or a big one whose shared part in .git was cleaned away, costs a full add."""
    index = tmp_path / "private.index"
    captures.capture(str(repo), str(index))
    captures.capture(str(repo), str(index))
    shared = list((repo / ".git").glob("sharedindex.*"))
    assert bool(shared) == (len(git(repo, "ls-files").splitlines()) >= gitcache.STATUS_FROM)  # big ones are split
    for path in shared:
        path.unlink()
    (repo / "after.txt").write_text("written after the damage\n")
    again = captures.capture(str(repo), str(index))
    assert again is not None
    assert again == fresh(repo, tmp_path, [0])
    index.write_bytes(b"DIRC garbage")
    assert captures.capture(str(repo), str(index)) == again


def test_a_nested_repository_counts_by_its_commit(repo: Path, tmp_path: Path, ralph_env: dict[str, str]) -> None:
    """An agent's nested repository is captured as its commit: a new commit there is a change, a dirty file not."""
    index = str(tmp_path / "private.index")
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "one"]):
        subprocess.run(["git", *args], cwd=nested, env=ralph_env, check=True)
    first = captures.capture(str(repo), index)
    (nested / "dirty.txt").write_text("not committed\n")
    dirty = captures.capture(str(repo), index)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "two"], cwd=nested, env=ralph_env, check=True)
    moved = captures.capture(str(repo), index)
    assert first is not None and dirty is not None and moved is not None
    assert dirty.tree == first.tree != moved.tree
    assert moved == fresh(repo, tmp_path, [0])


def test_restore_puts_back_files_branch_and_staging_area(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    (repo / "README").write_text("staged by the user\n")
    git(repo, "add", "README")
    (repo / "notes.txt").write_text("the user's untracked notes\n")
    before = captures.capture(str(repo), index)
    (repo / "src" / "a.py").write_text("broken\n")
    (repo / "src" / "b.py").unlink()
    (repo / "pkg").mkdir()
    (repo / "pkg" / "new.py").write_text("new\n")
    (repo / "debug.log").write_text("ignored: kept\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the attempt")
    assert before is not None
    undo.restore(str(repo), before, index)
    assert captures.capture(str(repo), index) == before == fresh(repo, tmp_path, [0])
    assert not (repo / "pkg").exists()
    assert (repo / "debug.log").read_text() == "ignored: kept\n"
    assert git(repo, "status", "--porcelain") == "M  README\n?? notes.txt".strip()


def test_restore_below_the_top_leaves_the_rest_of_the_repository_alone(repo: Path, tmp_path: Path) -> None:
    """A project in a folder of a bigger repository: undoing an attempt there touches nothing outside it."""
    index = str(tmp_path / "private.index")
    project = repo / "src"
    before = captures.capture(str(project), index)
    (project / "a.py").write_text("broken\n")
    (project / "new.py").write_text("new\n")
    (repo / "README").write_text("the user's edit outside the project\n")
    assert before is not None
    undo.restore(str(project), before, index)
    assert (project / "a.py").read_text() == "a = 1\n"
    assert not (project / "new.py").exists()
    assert (repo / "README").read_text() == "the user's edit outside the project\n"
    assert (repo / ".gitignore").exists()
    assert git(repo, "status", "--porcelain") == "M README"


def test_restore_before_the_first_commit_leaves_the_branch_unborn(tmp_path: Path, ralph_env: dict[str, str]) -> None:
    """An attempt that made the repository's first commit, then switched branch: HEAD names the branch yet to be
    born again, and the agent's commit is gone from it (save_attempt keeps it)."""
    root = tmp_path / "fresh"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=ralph_env, check=True)
    (root / "notes.txt").write_text("the user's\n")
    index = str(tmp_path / "private.index")
    before = captures.capture(str(root), index)
    (root / "agent.py").write_text("x = 1\n")
    for args in (["add", "-A"], ["commit", "-q", "-m", "first"], ["switch", "-q", "-c", "agent"]):
        subprocess.run(["git", *args], cwd=root, env=ralph_env, check=True)
    undo.restore(str(root), before, index)
    assert captures.capture(str(root), index) == before
    assert git(root, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", "main"], cwd=root, check=False).returncode != 0
    assert sorted(path.name for path in root.iterdir() if path.name != ".git") == ["notes.txt"]


def test_a_locked_staging_area_is_still_captured(repo: Path, tmp_path: Path) -> None:
    """Another git holds the user's index lock (an editor's, say): its tree is read from a copy, not guessed."""
    (repo / "README").write_text("staged by the user\n")
    git(repo, "add", "README")
    expected = git(repo, "write-tree")
    (repo / ".git" / "index.lock").write_text("")
    captured = captures.capture(str(repo), str(tmp_path / "private.index"))
    assert captured.index_tree == expected
    assert sorted(path.name for path in (repo / ".git").iterdir() if path.name.startswith("index")) == [
        "index",
        "index.lock",
    ]


def test_a_capture_git_refuses_raises_with_its_reason(repo: Path, tmp_path: Path) -> None:
    git(repo, "config", "core.sharedRepository", "nonsense")
    with pytest.raises(OSError, match="bad boolean config value"):
        captures.capture(str(repo), str(tmp_path / "private.index"))


def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The git processes ralph starts from now on, one line each, in the file returned."""
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir(exist_ok=True)
    shim.write_text(SHIM.format(git=shutil.which("git")))
    shim.chmod(0o755)
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    monkeypatch.setenv("GIT_CALLS", str(calls))
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    return calls


def commands(calls: Path) -> list[str]:
    """Each git process's command word (status, add, write-tree ...), its `-c` settings left out."""
    found = []
    for line in calls.read_text().splitlines():
        words = line.split()
        while words and words[0] == "-c":
            words = words[2:]
        found.append(words[0] if words else "")
    calls.write_text("")
    return found


def loosened(repo: Path, tmp_path: Path) -> tuple[str, WorkTree | None]:
    """A private index and its first capture, then an edit in src/ captured: src/'s tree is packed in the templates,
    so git adds that file and writes the tree loose, and the next change in src/ can be derived."""
    index = str(tmp_path / "private.index")
    start = captures.capture(str(repo), index)
    append("src/a.py", "a = 2\n")(repo)
    captures.capture(str(repo), index)
    return index, start


def test_files_edited_in_place_in_a_big_project_are_captured_by_git_status_alone(
    templates: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's edits in a big project: `git status` lists them, ralph hashes them and writes the trees above them
    (workspace/derived.py) where git's add and write-tree would each read the whole index. Each capture holds what a
    capture from scratch holds, and an undo from one puts every file back."""
    repo = Path(shutil.copytree(templates["big"], tmp_path / "repo", symlinks=True))
    index, start = loosened(repo, tmp_path)
    calls = git_calls(tmp_path, monkeypatch)
    write("src/a.py", "a = 3\n")(repo)
    remove("src/b.py")(repo)
    edited = captures.capture(str(repo), index)
    # git asked once whether the file may be hashed as it is (no filter, no end-of-line conversion)
    assert commands(calls) == ["status", "config", "check-attr"]
    assert edited == fresh(repo, tmp_path, [0])
    commands(calls)
    append("src/a.py", "a = 4\n")(repo)
    again = captures.capture(str(repo), index)
    assert commands(calls) == ["status"]
    assert again == fresh(repo, tmp_path, [1])
    assert again is not None and start is not None
    assert captures.changed_between(str(repo), start, again) == ["src/a.py", "src/b.py"]
    undo.restore(str(repo), start, index, again)
    assert (repo / "src" / "a.py").read_text() == "a = 1\n"
    assert (repo / "src" / "b.py").read_text() == "b = 1\n"
    assert captures.capture(str(repo), index) == start


@pytest.mark.parametrize(
    ("attributes", "written", "stored"),
    [
        ("*.py text eol=crlf\n", "a = 3\r\n", b"a = 3\n"),  # line ends
        ("*.py ident\n", "i = '$Id: 42 $'\n", b"i = '$Id$'\n"),  # an ident, with no carriage return to tell it
    ],
)
def test_a_file_git_would_convert_is_left_to_git(
    templates: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    attributes: str,
    written: str,
    stored: bytes,
) -> None:
    """Under an attribute that makes git store other bytes than the file's, git's add does it, never a hash here."""
    repo = Path(shutil.copytree(templates["big"], tmp_path / "repo", symlinks=True))
    index = str(tmp_path / "private.index")
    captures.capture(str(repo), index)
    write(".gitattributes", attributes)(repo)
    write("src/a.py", "a = 2\n")(repo)
    captures.capture(str(repo), index)  # src/'s tree written loose: the next edit could be derived
    calls = git_calls(tmp_path, monkeypatch)
    with open(repo / "src" / "a.py", "w", encoding="utf-8", newline="") as handle:
        handle.write(written)
    kept = captures.capture(str(repo), index)
    assert "add" in commands(calls)
    assert kept == fresh(repo, tmp_path, [0])
    assert kept is not None
    found = subprocess.run(
        ["git", "cat-file", "blob", f"{kept.tree}:src/a.py"], cwd=repo, capture_output=True, check=True
    )
    assert found.stdout == stored


def test_a_new_file_is_derived_and_an_undo_takes_it_back(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the agent made beside files git holds: hashed here too (git's status lists it, nothing adds it to the
    private index), and an undo still removes it, as it removes one git added."""
    index, start = loosened(repo, tmp_path)
    calls = git_calls(tmp_path, monkeypatch)
    write("src/new.py", "new = 1\n")(repo)
    end = captures.capture(str(repo), index)
    assert commands(calls) == ["status", "config", "check-attr"]
    assert end == fresh(repo, tmp_path, [0])
    assert start is not None and end is not None
    assert captures.changed_between(str(repo), start, end) == ["src/a.py", "src/new.py"]
    undo.restore(str(repo), start, index, end)
    assert not (repo / "src" / "new.py").exists()
    assert (repo / "src" / "a.py").read_text() == "a = 1\n"
    assert captures.capture(str(repo), index) == start
