"""git.auto_commit over a run whose iterations pass, fail and pass again: each commit holds what its own iteration
changed and ralph's record of it (progress.txt), never an earlier iteration's work nor the user's uncommitted
files; a failed attempt after a commit is undone back to that commit's files. The commit reads again only what
ralph wrote since the iteration's capture, and the next iteration starts from what the commit was made of: these
runs check that nothing is lost or misattributed on that shorter way.

In-process runs built as `ralph run` builds them (harness.py): real git, the agent's turns played back.
"""

from __future__ import annotations

from pathlib import Path

from ralphloop.core.events import IterationFinished
from tests.engine.harness import Turn, Turns, entries, git_out, run


def _committed(project: Path) -> list[tuple[str, list[str]]]:
    """ralph's commits on the run's branch, oldest first: (subject, the files it changed)."""
    log = git_out(project, "log", "--reverse", "--format=%x00%s", "--name-only", "main..HEAD")
    commits = []
    for chunk in log.split("\0")[1:]:
        subject, *files = [line for line in chunk.splitlines() if line]
        commits.append((subject, sorted(files)))
    return commits


def _prepared(project: Path, feature: Path, config: str = "") -> None:
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: true\n" + config)
    git_out(project, "add", "-A")
    git_out(project, "commit", "-q", "-m", "plan")
    (project / "mine.txt").write_text("the user's, uncommitted\n")  # never ralph's to commit


def test_each_commit_holds_its_own_iteration_and_a_failed_attempt_goes_back_to_the_last_commit(
    project: Path, feature: Path
) -> None:
    _prepared(project, feature)
    turns = Turns(
        Turn(write={"a.txt": "a\n"}, passes=["S-1"], say="did S-1\n"),
        Turn(write={"b.txt": "b\n", "a.txt": "a broken\n"}, exit=1, err="Error: tests failed\n"),
        Turn(write={"c.txt": "c\n"}, passes=["S-2"], say="did S-2\n"),
    )

    done = run(project, turns, n=3)

    assert "Traceback" not in done.screen
    prd = ".ralph/feat/prd.json"
    progress = ".ralph/feat/progress.txt"
    assert _committed(project) == [
        ("S-1: Story 1", sorted(["a.txt", prd, progress])),
        ("S-2: Story 2", sorted(["c.txt", prd, progress])),
    ]
    # the failed attempt was undone to the first commit's files, the user's file left as it was
    assert (project / "a.txt").read_text() == "a\n"
    assert not (project / "b.txt").exists()
    assert (project / "mine.txt").read_text() == "the user's, uncommitted\n"
    assert git_out(project, "status", "--porcelain", "--", ".", ":!.ralph").splitlines() == ["?? mine.txt"]
    # each commit's progress.txt holds ralph's entry of its own iteration (and of those before it)
    first = git_out(project, "show", f"HEAD~1:{progress}")
    assert "Iteration: 1" in first and "Iteration: 2" not in first
    last = git_out(project, "show", f"HEAD:{progress}")
    assert all(f"Iteration: {n}" in last for n in (1, 2, 3))
    assert [entry["Status"] for entry in entries(feature)] == ["complete", "failed", "complete"]


def test_what_a_post_iteration_hook_writes_is_committed_with_its_iteration(project: Path, feature: Path) -> None:
    hook = 'hooks:\n  post_iteration: echo "$RALPH_ITERATION" >> hooked.txt\n'
    _prepared(project, feature, hook)
    turns = Turns(Turn(write={"a.txt": "a\n"}, passes=["S-1"]), Turn(write={"c.txt": "c\n"}, passes=["S-2"]))

    done = run(project, turns, n=2)

    assert "Traceback" not in done.screen
    commits = _committed(project)
    assert [subject for subject, _ in commits] == ["S-1: Story 1", "S-2: Story 2"], commits
    assert {"a.txt", "hooked.txt"} <= set(commits[0][1]) and {"c.txt", "hooked.txt"} <= set(commits[1][1])
    assert "a.txt" not in commits[1][1]
    assert git_out(project, "show", "HEAD:hooked.txt").split() == ["1", "2"]


def _hook(project: Path, name: str, script: str) -> None:
    hook = project / ".git" / "hooks" / name
    hook.write_text("#!/bin/sh\n" + script)
    hook.chmod(0o755)


def test_a_pre_commit_hook_that_reformats_the_work_is_where_the_next_iteration_starts(
    project: Path, feature: Path
) -> None:
    # lint-staged style: the hook strips trailing spaces from the staged files and stages them again
    _prepared(project, feature)
    fix = (
        'for f in $(git diff --cached --name-only --diff-filter=ACM -- "*.txt"); do\n'
        '  sed -i "s/ *$//" "$f"; git add "$f"\n'
        "done\n"
    )
    _hook(project, "pre-commit", fix)
    turns = Turns(
        Turn(write={"a.txt": "a   \n"}, passes=["S-1"]),
        Turn(write={"b.txt": "b\n"}, exit=1, err="Error: tests failed\n"),
        Turn(write={"c.txt": "c\n"}, passes=["S-2"]),
    )

    done = run(project, turns, n=3)

    assert "Traceback" not in done.screen
    # the undo went back to the files as the commit left them, never to the agent's before the hook
    assert (project / "a.txt").read_text() == git_out(project, "show", "HEAD~1:a.txt") == "a\n"
    assert not (project / "b.txt").exists()
    assert git_out(project, "status", "--porcelain", "--", ".", ":!.ralph").splitlines() == ["?? mine.txt"]
    assert "a.txt" not in _committed(project)[1][1]


def test_what_a_post_commit_hook_writes_is_never_charged_to_the_next_iteration(project: Path, feature: Path) -> None:
    _prepared(project, feature)
    _hook(project, "post-commit", "git log -1 --format=%s > LAST_COMMIT.txt\n")
    turns = Turns(Turn(write={"a.txt": "a\n"}, passes=["S-1"]), Turn(write={"c.txt": "c\n"}, passes=["S-2"]))

    done = run(project, turns, n=2)

    assert "Traceback" not in done.screen
    assert [files for _, files in _committed(project)] == [
        sorted(["a.txt", ".ralph/feat/prd.json", ".ralph/feat/progress.txt"]),
        sorted(["c.txt", ".ralph/feat/prd.json", ".ralph/feat/progress.txt"]),
    ]
    assert "LAST_COMMIT.txt" not in entries(feature)[1].get("Files Changed", "")


def test_the_staging_area_ralph_committed_is_where_an_undo_puts_it_back(project: Path, feature: Path) -> None:
    """After ralph's commit the staging area is known without git (the commit's tree): an attempt that stages a
    file and fails is undone to exactly that staging area."""
    _prepared(project, feature)

    def stage(launch: object) -> None:
        (project / "staged.txt").write_text("staged by the agent\n")
        git_out(project, "add", "staged.txt")

    turns = Turns(
        Turn(write={"a.txt": "a\n"}, passes=["S-1"], say="did S-1\n"),
        Turn(first=stage, write={"a.txt": "a broken\n"}, exit=1, err="Error: tests failed\n"),
    )

    done = run(project, turns, n=2)

    assert "Traceback" not in done.screen
    assert _committed(project) == [
        ("S-1: Story 1", sorted(["a.txt", ".ralph/feat/prd.json", ".ralph/feat/progress.txt"]))
    ]
    assert git_out(project, "diff", "--cached", "--name-only") == ""
    assert not (project / "staged.txt").exists()
    assert (project / "a.txt").read_text() == "a\n"


def test_the_iteration_after_an_undo_starts_from_what_the_undo_left(project: Path, feature: Path) -> None:
    """After an undo the next start is the capture that checked it (with ralph's records read again), not a walk of
    every file: each iteration's changes are its own, and a second undo puts back the work the first one left."""
    git_out(project, "add", "-A")
    git_out(project, "commit", "-q", "-m", "plan")
    turns = Turns(
        Turn(write={"a.txt": "failed\n"}, exit=1, err="Error: tests failed\n"),
        Turn(write={"b.txt": "b\n"}, passes=["S-1"], say="did S-1\n"),
        Turn(write={"c.txt": "failed\n", "b.txt": "b broken\n"}, exit=1, err="Error: tests failed\n"),
        Turn(write={"d.txt": "d\n"}, passes=["S-2"], say="did S-2\n"),
    )

    done = run(project, turns, n=4)

    assert "Traceback" not in done.screen
    changed = [event.files_changed for event in done.events if isinstance(event, IterationFinished)]
    prd = ".ralph/feat/prd.json"
    assert changed == [("a.txt",), (prd, "b.txt"), ("b.txt", "c.txt"), (prd, "d.txt")]
    assert not (project / "a.txt").exists() and not (project / "c.txt").exists()
    assert (project / "b.txt").read_text() == "b\n" and (project / "d.txt").read_text() == "d\n"
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "complete", "failed", "complete"]


def test_work_git_leaves_out_of_a_commit_stops_the_run_said(project: Path, feature: Path) -> None:
    """A file the user marked skip-worktree is passed over by `git commit --include`: the run stops and says so,
    the work left in place, never counted as committed."""
    (project / "local.cfg").write_text("user's\n")
    _prepared(project, feature)
    git_out(project, "update-index", "--skip-worktree", "local.cfg")
    turns = Turns(Turn(write={"local.cfg": "the agent's\n"}, passes=["S-1"], say="did S-1\n"))

    done = run(project, turns, n=1)

    assert "Traceback" not in done.screen
    assert "skip-worktree" in done.screen, done.screen
    assert (project / "local.cfg").read_text() == "the agent's\n"
    assert "local.cfg" not in git_out(project, "show", "--name-only", "--format=", "HEAD")


def test_an_undo_takes_back_what_the_agent_staged_as_intent_to_add(project: Path, feature: Path) -> None:
    """`git add -N` shows in no tree of the staging area: the undo puts the staging area back all the same."""
    _prepared(project, feature)

    def intend(launch: object) -> None:
        git_out(project, "add", "-N", "mine.txt")

    turns = Turns(Turn(first=intend, write={"a.txt": "broken\n"}, exit=1, err="Error: tests failed\n"))

    run(project, turns, n=1)

    assert git_out(project, "status", "--porcelain", "--", "mine.txt").splitlines() == ["?? mine.txt"]
    assert git_out(project, "diff", "--cached", "--name-only") == ""
