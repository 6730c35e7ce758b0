"""The undo of a failed attempt puts back everything git holds, whatever the agent did with git: the branch
(switched, detached, moved by an amend or a reset), a merge, rebase, cherry-pick or revert left half done with
conflict markers, the staging area and the files; the retry then starts from the workspace as it was.

In-process runs built as `ralph run` builds them (harness.py), real git, the agent's turns (its git commands
included, harness_git.py) played back. Each failed attempt is saved under refs/ralph/attempts/feat/iteration-1
first; with auto-commit on, the retry's commit is an ordinary one on the run's branch (never a merge commit, never
conflict markers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_json, write_prd
from tests.engine.harness import Turn, Turns, entries, git_out, run
from tests.engine.harness_git import GitTurn

BRANCH = "refs/heads/feature/feat"
SAVED = "refs/ralph/attempts/feat/iteration-1"
# What git leaves in .git while an operation waits for the user.
IN_PROGRESS = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply", "sequencer")
CONFLICTS = {"write": {"shared.txt": "the agent's\n", "src/agent.py": "x = 1\n"}, "commit": "agent work"}

HOSTILE: dict[str, dict[str, Any]] = {
    "switches to a new branch": {
        "write": {"src/agent.py": "x = 1\n"},
        "git": [["switch", "-q", "-c", "agent-branch"], ["add", "-A"], ["commit", "-q", "-m", "agent work"]],
    },
    "commits, then switches to another branch": {
        "write": {"src/agent.py": "x = 1\n"},
        "commit": "agent work",
        "git": [["switch", "-q", "side"]],
    },
    "deletes the run's branch": {
        "write": {"src/agent.py": "x = 1\n"},
        "git": [["switch", "-q", "-c", "agent-branch"], ["branch", "-q", "-D", "feature/feat"]],
    },
    "detaches HEAD": {"write": {"src/agent.py": "x = 1\n"}, "git": [["checkout", "-q", "--detach", "HEAD~1"]]},
    "amends the last commit": {
        "write": {"src/agent.py": "x = 1\n"},
        "git": [["add", "-A"], ["commit", "-q", "--amend", "-m", "amended by the agent"]],
    },
    "resets --hard to an older commit": {"git": [["reset", "-q", "--hard", "HEAD~1"]]},
    "leaves a merge with conflict markers": {**CONFLICTS, "git": [["merge", "side"]]},
    "leaves a rebase in progress": {**CONFLICTS, "git": [["rebase", "side"]]},
    "leaves a cherry-pick in progress": {**CONFLICTS, "git": [["cherry-pick", "side"]]},
    "leaves a revert in progress": {**CONFLICTS, "git": [["revert", "--no-edit", "HEAD~1"]]},
    "stages half of a conflict resolution": {
        **CONFLICTS,
        "git": [["merge", "side"], ["add", "src/agent.py"], ["rm", "-q", "--cached", "plain.txt"]],
    },
}
# How the hostile attempt ends: a plain failure, or a claim of success (exit 0, its story marked passing) that
# is refused because the work is not on the run's branch, on the history it began with, ready to commit.
ENDINGS: dict[str, dict[str, Any]] = {
    "fails": {"err": "Error: tests failed\n", "exit": 1},
    "claims-success": {"passes": ["S-1"], "say": "All done.\n"},
}


def prepared(project: Path, feature: Path) -> None:
    """`feature` with two open stories and auto-commit on; shared.txt changed on the run's branch and, differently,
    on a branch `side` (so that merging, rebasing or cherry-picking `side` conflicts)."""
    write_prd(feature, 2)
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: true\n")
    (project / "shared.txt").write_text("base\n")
    (project / "plain.txt").write_text("plain\n")
    git_out(project, "add", "-A")
    git_out(project, "commit", "-q", "-m", "plan")
    git_out(project, "switch", "-q", "-c", "side")
    (project / "shared.txt").write_text("side's\n")
    git_out(project, "commit", "-q", "-am", "side")
    git_out(project, "switch", "-q", "main")
    (project / "shared.txt").write_text("main's\n")
    git_out(project, "commit", "-q", "-am", "main")
    git_out(project, "branch", "feature/feat")  # the run's branch (prd.json's branchName), where main is


def tracked_files(project: Path) -> dict[str, str]:
    """The project's own files (ralph's workspace folder aside), by path."""
    return {
        str(path.relative_to(project)): path.read_text()
        for path in sorted(project.rglob("*"))
        if path.is_file() and path.relative_to(project).parts[0] not in (".git", ".ralph")
    }


def iteration_entry(feature: Path, number: int) -> dict[str, str]:
    """Iteration `number`'s progress entry (the agent's reset may have taken the ones before it away)."""
    return next(entry for entry in entries(feature) if entry["Iteration"] == str(number))


def steps(write: dict[str, str] | None = None, git: list[list[str]] | None = None, **turn: Any) -> GitTurn:
    """step_agent.py's plan for one iteration as a played-back turn: write (and commit), run git, then the rest."""
    return GitTurn(Turn(write=write or {}, **turn), git=git or [])


@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("hostile", list(HOSTILE), ids=lambda name: name.replace(" ", "-"))
def test_a_failed_attempt_is_undone_whatever_it_did_with_git(
    hostile: str, ending: str, project: Path, feature: Path
) -> None:
    prepared(project, feature)
    start = git_out(project, "rev-parse", "main").strip()
    files = tracked_files(project)
    starts: list[dict[str, Any]] = []
    retry_turn = GitTurn(Turn(write={"src/ok.py": "ok = True\n"}, passes=["S-1"]), seen=starts)

    done = run(project, Turns(steps(**HOSTILE[hostile], **ENDINGS[ending]), retry_turn), n=2)

    out = done.screen
    assert "Traceback" not in out
    first = entries(feature)[0]
    assert "then undone" in first["Note"], first
    assert first["Status"] == "failed", first
    # The retry started where the failed attempt did: on the run's branch, at its commit, nothing staged or
    # in progress, none of the attempt's files.
    (retry,) = starts
    assert (retry["branch"], retry["head"]) == (BRANCH, start), (retry, out)
    assert [line for line in retry["status"] if not line[3:].startswith(".ralph/")] == [], (retry, out)
    # The retry's work is one ordinary commit on the run's branch: no merge, no conflict marker, nothing else.
    assert done.outcome.reason.exit_code == 1 and read_json(feature / "status.json")["exitReason"] == "max_iterations"
    assert git_out(project, "symbolic-ref", "HEAD").strip() == BRANCH
    assert git_out(project, "rev-list", "--parents", "-1", "HEAD").split() == [
        git_out(project, "rev-parse", "HEAD").strip(),
        start,
    ]
    assert tracked_files(project) == {**files, "src/ok.py": "ok = True\n"}
    assert not [name for name in IN_PROGRESS if (project / ".git" / name).exists()]
    assert git_out(project, "status", "--porcelain", "--untracked-files=all").strip() == ""
    # The attempt itself is kept for the human.
    assert git_out(project, "rev-parse", "--verify", "-q", SAVED).strip()


def test_an_undo_that_cannot_put_the_workspace_back_stops_the_run_naming_the_saved_attempt(
    project: Path, feature: Path
) -> None:
    # The attempt leaves a repository of its own in the project: git never deletes one (it may hold work), so the
    # files cannot go back as they were; the loop stops instead of retrying on top of the failed attempt.
    prepared(project, feature)
    nested = steps(
        write={"src/agent.py": "x = 1\n"},
        git=[["init", "-q", "nested"], ["-C", "nested", "commit", "-q", "--allow-empty", "-m", "nested"]],
        err="Error: tests failed\n",
        exit=1,
    )

    done = run(project, Turns(nested, steps(passes=["S-1"])), n=2)

    assert done.outcome.reason.exit_code == 1, done.screen
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "error", status
    assert SAVED in status["exitMessage"] and "nested" in status["exitMessage"], status
    assert SAVED in done.screen
    assert not (feature / "logs" / "iteration-2.log").exists()  # no retry on top of the failed attempt
    assert git_out(project, "rev-parse", "--verify", "-q", SAVED).strip()


def test_an_agent_that_rewinds_history_is_a_failed_attempt_undone_with_the_history_put_back(
    project: Path, feature: Path
) -> None:
    prepared(project, feature)
    one = steps(write={"src/one.py": "one = 1\n"}, passes=["S-1"])  # committed by ralph (auto-commit)
    rewind = steps(git=[["reset", "-q", "--hard", "HEAD~1"]])  # S-1's commit gone: S-1 open again
    before = git_out(project, "rev-parse", "HEAD")

    done = run(project, Turns(one, rewind), n=2)

    out = done.screen
    second = iteration_entry(feature, 2)
    assert second["Status"] == "failed", (second, out)
    assert "✗ S-2 failed (the agent rewrote the branch's history: HEAD went from" in out, out
    assert "with 1 task(s) open" in out  # S-1's mark came back with the undo: the count says so
    assert "failed attempt saved as refs/ralph/attempts/feat/iteration-2" in second["Note"], second
    # Undone: ralph's commit of S-1 is HEAD's again, with its mark and its work; nothing is to be done twice.
    subjects = git_out(project, "log", "--format=%s", "-n", "1").splitlines()
    assert subjects == ["S-1: Story 1"], subjects
    assert git_out(project, "rev-parse", "HEAD") != before
    assert json.loads((feature / "prd.json").read_text())["userStories"][0]["passes"] is True
    assert (project / "src" / "one.py").read_text() == "one = 1\n"
    # The progress log keeps every entry (it is append-only).
    assert iteration_entry(feature, 1)["Status"] == "complete"


def test_a_reset_that_drops_an_uncommitted_mark_is_reported(project: Path, feature: Path) -> None:
    prepared(project, feature)
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: false\n")
    git_out(project, "commit", "-q", "-am", "no auto-commit")
    git_out(project, "branch", "-f", "feature/feat")
    one = steps(write={"src/one.py": "one = 1\n"}, passes=["S-1"])  # left uncommitted
    reset = steps(git=[["reset", "-q", "--hard"]])  # HEAD stays; prd.json back to its committed self

    done = run(project, Turns(one, reset), n=2)

    note = iteration_entry(feature, 2)["Note"]
    assert "S-1" in note and "refs/ralph/rewound/feat/iteration-2" in note, (note, done.screen)
    kept = json.loads(git_out(project, "show", "refs/ralph/rewound/feat/iteration-2:.ralph/feat/prd.json"))
    assert kept["userStories"][0]["passes"] is True


def test_a_story_the_agent_reopens_by_editing_the_task_file_is_not_called_a_rewind(
    project: Path, feature: Path
) -> None:
    prepared(project, feature)
    reopened = json.loads((feature / "prd.json").read_text())
    one = steps(write={"src/one.py": "one = 1\n"}, passes=["S-1"])
    reopen = steps(write={".ralph/feat/prd.json": json.dumps(reopened, indent=2) + "\n", "src/two.py": "two\n"})

    done = run(project, Turns(one, reopen), n=2)

    assert "rewound" not in (feature / "progress.txt").read_text(), done.screen
    assert not git_out(project, "for-each-ref", "refs/ralph/rewound/").strip()
