"""Trees ralph derives without git (workspace/objects.py, workspace/derived.py), checked against real git: a
derived tree is the tree `git add` and `git write-tree` make, a comparison of two trees is `git diff-tree`'s,
and wherever git would store other bytes than the file's, or an object is not loose, git is asked instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ralphloop.workspace import captures, gitcache, objects
from ralphloop.workspace.captures import WorkTree

PROGRESS = ".ralph/feat/progress.txt"
ENV = {
    **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@t.invalid",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@t.invalid",
}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".ralph" / "feat").mkdir(parents=True)
    (root / "src").mkdir()
    (root / PROGRESS).write_text("# progress\n")
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        git(root, *args)
    return root


def fresh(root: Path, tmp_path: Path) -> WorkTree:
    """A capture through a new private index: git's own `add -A` and `write-tree` of every file."""
    index = tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}.index"
    return captures.capture(str(root), str(index))


def append(root: Path, path: str, text: str) -> None:
    with open(root / path, "a", encoding="utf-8") as handle:
        handle.write(text)


def test_a_derived_tree_is_the_tree_git_writes_and_costs_no_git_process(repo: Path, tmp_path: Path) -> None:
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$@" >> "$GIT_CALLS"\nexec {shutil.which("git")} "$@"\n')
    shim.chmod(0o755)
    calls = tmp_path / "calls.txt"
    script = textwrap.dedent(
        """
        import os, sys
        from ralphloop.workspace import captures, gitcache
        root, progress = sys.argv[1], sys.argv[2]
        index = captures.scratch_index(root, "feat")
        start = captures.capture(root, index)
        start = captures.recapture(root, index, start, [progress])  # once to learn the attributes
        for entry in range(3):
            with open(os.path.join(root, progress), "a") as handle:
                handle.write(f"entry {entry}\\n")
            open(os.environ["GIT_CALLS"], "a").write("--\\n")
            start = captures.recapture(root, index, start, [progress])
            assert gitcache.memo(index).derived[1] == start.tree, gitcache.memo(index).derived
            open(os.environ["GIT_CALLS"], "a").write("==\\n")
        print(start.tree)
        """
    )
    env = {**ENV, "PATH": f"{shim.parent}{os.pathsep}{ENV['PATH']}", "GIT_CALLS": str(calls)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(repo), PROGRESS], env=env, check=True, capture_output=True, text=True
    )
    between = [part.split("--\n")[-1] for part in calls.read_text().split("==\n")[:-1]]
    assert between == ["", "", ""]  # no git process for a derived tree
    assert done.stdout.strip() == fresh(repo, tmp_path).tree
    assert "error" not in git(repo, "fsck", "--no-dangling", "--strict")


def test_a_derived_tree_keeps_the_executable_bit_and_a_deep_path(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    start = captures.capture(str(repo), index)
    append(repo, "run.sh", "echo hi\n")
    append(repo, PROGRESS, "one\n")
    again = captures.recapture(str(repo), index, start, ["run.sh", PROGRESS])
    memo = gitcache.memo(index)
    assert memo is not None and memo.derived is not None and memo.derived[1] == again.tree
    assert again == fresh(repo, tmp_path)
    assert git(repo, "ls-tree", again.tree, "run.sh").startswith("100755 ")


def test_the_next_capture_after_a_derived_tree_holds_every_change(repo: Path, tmp_path: Path) -> None:
    """The private index still holds the tree the derived one came from: the next capture adds ralph's file
    too, and the comparison with the derived start leaves it out when the agent did not touch it."""
    index = str(tmp_path / "private.index")
    captured = captures.capture(str(repo), index)
    append(repo, PROGRESS, "ralph's entry\n")
    start = captures.recapture(str(repo), index, captured, [PROGRESS])
    append(repo, "src/a.py", "a = 2\n")  # the agent's work
    end = captures.capture(str(repo), index)
    assert end == fresh(repo, tmp_path)
    assert captures.changed_between(str(repo), start, end, gitcache.memo(index).layout) == ["src/a.py"]  # type: ignore[union-attr]
    assert captures.recapture(str(repo), index, start, []) == fresh(repo, tmp_path)  # from the derived tree


Change = Callable[[Path], None]


def write(path: str, text: str) -> Change:
    def change(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)

    return change


def unlink(path: str) -> Change:
    return lambda root: (root / path).unlink()


def folder_to_file(root: Path) -> None:
    shutil.rmtree(root / "src")
    (root / "src").write_text("now a file\n")


def file_to_folder(root: Path) -> None:
    (root / "run.sh").unlink()
    (root / "run.sh").mkdir()
    (root / "run.sh" / "inner.txt").write_text("inside\n")


CHANGES: list[tuple[str, Change]] = [
    ("nothing", lambda root: None),
    ("an edit", write("src/a.py", "a = 2\n")),
    ("a new file deep down", write("src/x/y/z.py", "z\n")),
    ("a deletion", unlink("src/x/y/z.py")),
    ("a mode change", lambda root: (root / "src" / "a.py").chmod(0o755)),
    ("a symlink", lambda root: (root / "link").symlink_to("src/a.py")),
    ("a name that sorts beside a folder", lambda root: (root / "src.txt").symlink_to("run.sh")),
    ("a symlink's target changed", lambda root: os.replace(root / "src.txt", root / "link")),
    ("a folder becomes a file", folder_to_file),
    ("a file becomes a folder", file_to_folder),
    ("an odd name", write("odd\tname\nwith 'quotes'.txt", "x\n")),
]


def test_a_comparison_of_loose_trees_is_git_diff_tree(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    trees = [captures.capture(str(repo), index)]
    for _name, change in CHANGES:
        change(repo)
        trees.append(captures.capture(str(repo), index))
    store = objects.Store(os.path.join(repo, ".git", "objects"))
    for before in trees:
        for after in trees:
            listed = git(repo, "diff-tree", "-r", "--name-only", "-z", "--no-renames", before.tree, after.tree)
            expected = sorted(name for name in listed.split("\0") if name) if before.tree != after.tree else []
            assert objects.changed_paths(store, before.tree, after.tree) == expected


def test_packed_trees_are_compared_and_derived_by_git(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    start = captures.capture(str(repo), index)
    append(repo, "src/a.py", "a = 2\n")
    end = captures.capture(str(repo), str(tmp_path / "other.index"))  # through git: a tree ralph never read
    git(repo, "update-ref", "refs/keep/start", git(repo, "commit-tree", start.tree, "-m", "s"))
    git(repo, "update-ref", "refs/keep/end", git(repo, "commit-tree", end.tree, "-m", "e"))
    git(repo, "repack", "-adq")
    git(repo, "prune-packed")
    store = objects.Store(os.path.join(repo, ".git", "objects"))
    assert objects.changed_paths(store, start.tree, end.tree) is None  # not loose: git is asked
    layout = gitcache.memo(index).layout  # type: ignore[union-attr]
    assert captures.changed_between(str(repo), start, end, layout) == ["src/a.py"]
    append(repo, PROGRESS, "entry\n")
    assert objects.with_file(store, end.tree, PROGRESS, (repo / PROGRESS).read_bytes(), 0o644) is None
    assert captures.recapture(str(repo), index, end, [PROGRESS]) == fresh(repo, tmp_path)


@pytest.mark.parametrize(
    "setting",
    [
        ("attributes", "*.txt text eol=crlf\n"),
        ("attributes", "progress.txt filter=upper\n"),
        ("attributes", "*.txt ident\n"),
        ("config", "core.autocrlf=input"),
        ("attributes-file", "progress.txt filter=upper\n"),
    ],
    ids=["eol", "filter", "ident", "autocrlf", "core-attributes-file"],
)
def test_a_file_git_would_convert_is_added_by_git(repo: Path, tmp_path: Path, setting: tuple[str, str]) -> None:
    """git stores such a file as its conversion makes it: hashing the bytes on disk would be wrong. The
    attributes are read again when a file that holds them changes, here in the middle of a run."""
    index = str(tmp_path / "private.index")
    git(repo, "config", "filter.upper.clean", "tr a-z A-Z")
    elsewhere = tmp_path / "my-attributes"  # core.attributesFile, outside every place watched by default
    elsewhere.write_text("")
    git(repo, "config", "core.attributesFile", str(elsewhere))
    start = captures.capture(str(repo), index)
    append(repo, PROGRESS, "first entry\r\n$Id$\n")
    derived = captures.recapture(str(repo), index, start, [PROGRESS])
    memo = gitcache.memo(index)
    assert memo is not None and memo.derived is not None and memo.derived[1] == derived.tree  # plain so far
    kind, text = setting
    if kind == "attributes":
        (repo / ".ralph" / "feat" / ".gitattributes").write_text(text)
        git(repo, "add", ".ralph/feat/.gitattributes")
    elif kind == "attributes-file":
        elsewhere.write_text(text)
    else:
        git(repo, "config", *text.split("="))
    base = captures.capture(str(repo), index)
    append(repo, PROGRESS, "second entry\r\n")
    again = captures.recapture(str(repo), index, base, [PROGRESS])
    assert memo.derived is None or memo.derived[0] != memo.tree  # git added it
    assert again == fresh(repo, tmp_path)


def test_a_progress_file_that_became_a_symlink_is_left_to_git(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    start = captures.capture(str(repo), index)
    (repo / PROGRESS).unlink()
    (repo / PROGRESS).symlink_to("/dev/zero")
    again = captures.recapture(str(repo), index, start, [PROGRESS])
    assert again == fresh(repo, tmp_path)
    assert git(repo, "ls-tree", again.tree, PROGRESS).startswith("120000 ")


def test_a_store_named_by_the_environment_is_left_to_git(monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(repo / ".git" / "objects"))
    assert objects.Store.of(str(repo / ".git")) is None


def test_what_is_not_a_loose_tree_reads_as_none(repo: Path) -> None:
    store = objects.Store(os.path.join(repo, ".git", "objects"))
    head = git(repo, "rev-parse", "HEAD")
    assert store.tree(head) is None  # a commit
    assert store.tree("0" * 40) is None
    assert store.tree("ab" * 32) is None  # a SHA-256 id
    blob = store.write(b"blob", b"x")
    assert git(repo, "cat-file", "-p", blob) == "x"
    assert store.tree(blob) is None
    broken = store.write(b"tree", b"100644 cut\0short")
    assert store.tree(broken) is None


def test_a_tree_holds_the_paths_it_has_and_no_others(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    tree = captures.capture(str(repo), index).tree
    store = objects.Store(os.path.join(repo, ".git", "objects"))
    assert objects.holds_all(store, tree, [PROGRESS, "src/a.py", "run.sh"])
    assert not objects.holds_all(store, tree, ["src/a.py", "src/new.py"])  # a new file
    assert not objects.holds_all(store, tree, ["src"])  # a folder, not a file
    assert not objects.holds_all(store, tree, ["run.sh/inner"])  # a file, not a folder
    assert not objects.holds_all(None, tree, ["src/a.py"]) and not objects.holds_all(store, None, ["src/a.py"])
    (repo / "src" / "b.py").write_text("b = 2\n")
    unread = captures.capture(str(repo), str(tmp_path / "other.index")).tree  # git's: ralph has not read it
    git(repo, "update-ref", "refs/keep/tree", git(repo, "commit-tree", unread, "-m", "t"))
    git(repo, "repack", "-adq")
    git(repo, "prune-packed")
    assert not objects.holds_all(store, unread, ["src/a.py"])  # packed: not known here, so not said
    assert objects.holds_all(store, tree, ["src/a.py"])  # read once while loose: an id names its content for good


@pytest.mark.parametrize("planted", ["fifo", "zero", "bomb", "not-zlib"])
def test_what_is_planted_where_an_object_goes_reads_as_not_loose(repo: Path, planted: str) -> None:
    """An agent may put a FIFO, a link to /dev/zero or a zlib bomb where ralph reads an object: it reads as not
    loose, at once and in bounded memory (git is asked instead)."""
    import zlib

    store = objects.Store(os.path.join(repo, ".git", "objects"))
    oid = "ab" * 20
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    path.parent.mkdir(exist_ok=True)
    if planted == "fifo":
        os.mkfifo(path)
    elif planted == "zero":
        path.symlink_to("/dev/zero")
    elif planted == "bomb":
        path.write_bytes(zlib.compress(b"tree 99999999999\0" + b"\0" * (64 * 1024 * 1024), 9))
    else:
        path.write_bytes(b"plain text")
    assert store.read(oid, b"tree") is None
    assert store.tree(oid) is None


def test_a_flooded_progress_file_is_left_to_git(repo: Path, tmp_path: Path) -> None:
    index = str(tmp_path / "private.index")
    start = captures.capture(str(repo), index)
    with open(repo / PROGRESS, "ab") as handle:
        handle.write(b"x" * (64 * 1024 * 1024 + 1))
    again = captures.recapture(str(repo), index, start, [PROGRESS])
    memo = gitcache.memo(index)
    assert memo is not None and (memo.derived is None or memo.derived[1] != again.tree)  # git added it
    assert again == fresh(repo, tmp_path)


def test_a_progress_file_that_is_a_symlink_in_the_repository_is_read_through(repo: Path, tmp_path: Path) -> None:
    """ralph appends through the link: what it names is read again too, so the next start holds the entry."""
    (repo / "notes").mkdir()
    (repo / "notes" / "log.txt").write_text("# log\n")
    (repo / PROGRESS).unlink()
    (repo / PROGRESS).symlink_to("../../notes/log.txt")
    index = str(tmp_path / "private.index")
    start = captures.capture(str(repo), index)
    append(repo, PROGRESS, "an entry\n")
    assert captures.recapture(str(repo), index, start, [PROGRESS]) == fresh(repo, tmp_path)


def test_a_tree_planted_to_hold_itself_is_left_to_git(repo: Path) -> None:
    """Objects are not checked against their names here: a "tree" that names itself as a folder reads as not
    loose, at a bounded depth, never a crash."""
    import zlib

    store = objects.Store(os.path.join(repo, ".git", "objects"))
    oid = "cd" * 20
    content = b"40000 d\0" + bytes.fromhex(oid)
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(zlib.compress(b"tree %d\0" % len(content) + content))
    empty = store.write(b"tree", b"")
    assert objects.changed_paths(store, empty, oid) is None


def test_a_blob_read_from_loose_objects_is_what_git_show_prints(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fleet/gitops.blob: `git show REF:PATH`'s bytes for HEAD (of the main worktree and of a linked one), a
    branch and a commit id, a link, a path the commit lacks and a branch that does not exist, with no git process
    while the objects are loose; a folder, a submodule and packed objects are git's, with the same answers."""
    from ralphloop.fleet import gitops

    (repo / "link").symlink_to("src/a.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a link")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{git(repo, 'rev-parse', 'HEAD')},sub")
    git(repo, "commit", "-q", "-m", "a submodule")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "src" / "a.py").write_text("a = 2\n")
    git(linked, "commit", "-q", "-am", "on the side")
    commit = git(repo, "rev-parse", "HEAD")

    def shown(root: Path, ref: str, rel: str) -> bytes | None:
        done = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=root, env=ENV, capture_output=True, check=False)
        return done.stdout if done.returncode == 0 else None

    asked = [
        (repo, "HEAD", "src/a.py"),
        (repo, "HEAD", "run.sh"),
        (repo, "HEAD", "link"),
        (repo, "HEAD", "missing.txt"),
        (repo, "HEAD", "run.sh/inner"),
        (repo, "refs/heads/side", "src/a.py"),
        (repo, "refs/heads/none", "src/a.py"),
        (repo, commit, PROGRESS),
        (linked, "HEAD", "src/a.py"),
    ]
    gits = [(repo, "HEAD", "src"), (repo, "HEAD", "sub")]  # a folder, a submodule: git says
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    gitops.common_dir(str(repo))  # asked of git once, kept
    gitops.common_dir(str(linked))
    trace.write_text("")
    for root, ref, rel in asked:
        assert gitops.blob(str(root), ref, rel) == shown(root, ref, rel), (root, ref, rel)
    started = [line for line in trace.read_text().splitlines() if '"event":"start"' in line]
    assert started == [], "a loose blob was asked of git"  # `shown`'s own git runs without the trace (ENV)
    for root, ref, rel in gits:
        assert gitops.blob(str(root), ref, rel) == shown(root, ref, rel), (root, ref, rel)
    git(repo, "gc", "-q")  # everything packed: git is asked, and says the same
    for root, ref, rel in asked + gits:
        assert gitops.blob(str(root), ref, rel) == shown(root, ref, rel), (root, ref, rel)


@pytest.mark.parametrize("rel_in_base", [True, False], ids=["rels-in-base", "rels-new-on-the-branch"])
def test_a_branch_stripped_of_the_coordinators_files_from_loose_objects_is_what_git_makes(
    repo: Path, tmp_path: Path, rel_in_base: bool
) -> None:
    """fleet/gitops.strip_paths: a story's commits made again without its changes to the pass mark and progress,
    from loose trees in Python, equal the ones git makes through an index (the same repository, packed): the same
    trees in the same order, a commit that held only those files dropped, a folder left empty gone."""
    from ralphloop.fleet import gitops

    rels = [".ralph/feat/prd.json", ".ralph/notes/progress.md"]
    if rel_in_base:
        (repo / ".ralph" / "feat" / "prd.json").write_text("{}\n")
        (repo / ".ralph" / "notes").mkdir()
        (repo / ".ralph" / "notes" / "progress.md").write_text("# progress\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "the task file")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "-c", "story")
    steps: list[tuple[str, dict[str, str]]] = [
        ("work and marks", {"src/a.py": "a = 2\n", rels[0]: '{"passes": true}\n', rels[1]: "# progress\n- done\n"}),
        ("marks alone", {rels[0]: '{"passes": false}\n'}),
        ("a new folder", {"src/deep/er/b.py": "b = 1\n", "zz.txt": "z\n", rels[1]: "# progress\n- more\n"}),
    ]
    for message, files in steps:
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message)
    packed = tmp_path / "packed"
    git(tmp_path, "clone", "-q", "--no-local", str(repo), str(packed))  # the same commits, in a pack
    git(packed, "switch", "-q", "story")

    def history(root: Path, head: str | None) -> list[tuple[str, str]]:
        listed = git(root, "log", "--reverse", "--format=%T %s", f"{base}..{head}") if head else ""
        return [tuple(line.split(" ", 1)) for line in listed.splitlines()]  # type: ignore[misc]

    commits = git(repo, "rev-list", "--reverse", f"{base}..HEAD").split()
    assert gitops._stripped_from_objects(str(repo), base, rels, commits) is not None  # loose: made without git
    loose = history(repo, gitops.strip_paths(str(repo), base, rels))
    by_git = history(packed, gitops.strip_paths(str(packed), base, rels))
    assert loose == by_git
    assert [message for _, message in loose] == ["work and marks", "a new folder"]
    assert gitops._stripped_from_objects(str(packed), base, rels, []) is None  # packed: git made them


def test_what_loose_reads_cannot_say_is_left_to_git(repo: Path, tmp_path: Path) -> None:
    """A folder where the coordinator's file is (git keeps it, or refuses), a path git resolves from the current
    folder, and objects `git replace` stands in for: no answer from the files, so git gives its own."""
    from ralphloop.fleet import gitops

    base = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "-c", "story")
    (repo / ".ralph" / "feat" / "prd.json").mkdir()  # a folder where the task file goes
    (repo / ".ralph" / "feat" / "prd.json" / "notes.md").write_text("the agent's\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a folder at the mark's path")
    commits = git(repo, "rev-list", "--reverse", f"{base}..HEAD").split()
    rels = [".ralph/feat/prd.json"]
    assert gitops._stripped_from_objects(str(repo), base, rels, commits) is None
    store = objects.Store(os.path.join(repo, ".git", "objects"))
    assert objects.blob_at(store, base, "./run.sh") == (False, None)
    assert objects.blob_at(store, base, "src/") == (False, None)
    assert objects.blob_at(store, base, "run.sh") == (True, b"#!/bin/sh\n")
    assert objects.Store.of(str(repo / ".git")) is not None
    git(repo, "replace", base, git(repo, "rev-parse", "HEAD"))
    assert objects.Store.of(str(repo / ".git")) is None
