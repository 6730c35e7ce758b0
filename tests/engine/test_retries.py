"""Task retries, in-process: a failed attempt is saved (a git ref and a patch), undone, and the task tried again.

Runs built as `ralph run` builds them, their agents played back (harness.py), real git. The user's own work (an
untracked file, a staged and an unstaged change, ignored files) survives every undo; the agent's files, deletions
and commits of a failed attempt are gone from the workspace but recoverable from
refs/ralph/attempts/<feature>/iteration-N and logs/iteration-N.patch. The CLI's side (the hint it prints, pasted;
an unknown story's error line) is tests/integration/test_retries_e2e.py's.
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.runner import Launch
from tests.conftest import read_json, write_prd
from tests.engine.harness import Turn, Turns, entries, git_out, run

REF = "refs/ralph/attempts/feat/iteration-{}"
# Each attempt: commit one file, leave another uncommitted, then fail.
FAILING = Turn(
    write={"src/feature.py": "attempt = {n}\n"},
    commit="wip: attempt {n}",
    err="Error: tests failed in attempt {n}\n",
    exit=1,
)
# The same, and it also writes an ignored build output and deletes a tracked file and the user's untracked one.
FAILING_AFTER = Turn(
    write={"src/feature.py": "attempt = {n}\n", "scratch.txt": "scratch {n}\n", "build/out.txt": "built {n}\n"},
    delete=["gone.txt", "notes.txt"],
    commit="wip: attempt {n}",
    err="Error: tests failed in attempt {n}\n",
    exit=1,
)


def user_work(project: Path) -> None:
    """The user's, before the loop starts: a staged change, an unstaged change, an untracked file."""
    for name in ("tracked.txt", "edited.txt", "gone.txt"):
        (project / name).write_text("v1\n")
    (project / ".gitignore").write_text("build/\n")
    git_out(project, "add", "tracked.txt", "edited.txt", "gone.txt", ".gitignore")
    git_out(project, "commit", "-q", "-m", "user files")
    (project / "tracked.txt").write_text("v2 staged\n")
    git_out(project, "add", "tracked.txt")
    (project / "edited.txt").write_text("v2 not staged\n")
    (project / "notes.txt").write_text("my notes\n")


def assert_user_work_kept(project: Path) -> None:
    assert (project / "notes.txt").read_text() == "my notes\n"
    assert (project / "tracked.txt").read_text() == "v2 staged\n"
    assert (project / "edited.txt").read_text() == "v2 not staged\n"
    assert (project / "gone.txt").read_text() == "v1\n"
    assert git_out(project, "diff", "--cached", "--name-only").split() == ["tracked.txt"]
    assert git_out(project, "diff", "--name-only").split() == ["edited.txt"]
    assert "?? notes.txt" in git_out(project, "status", "--porcelain").splitlines()


def recorder(starts: list[dict[str, Any]]) -> Callable[[Launch], None]:
    """What tests/agents/step_agent.py's `record` notes as an iteration starts: HEAD and `git status`."""

    def record(launch: Launch) -> None:
        root = Path(launch.cwd)
        status = git_out(root, "status", "--porcelain", "--untracked-files=all").splitlines()
        number = int(launch.command.env["RALPH_ITERATION"])
        starts.append({"iteration": number, "head": git_out(root, "rev-parse", "HEAD").strip(), "status": status})

    return record


def test_a_failing_story_is_retried_from_a_clean_workspace_then_stops(project: Path, feature: Path) -> None:
    user_work(project)
    head = git_out(project, "rev-parse", "HEAD").strip()
    starts: list[dict[str, Any]] = []
    failing = dataclasses.replace(FAILING_AFTER, first=recorder(starts))

    done = run(project, Turns(then=failing), n=10)

    assert done.outcome.reason is ExitReason.RETRIES_EXHAUSTED
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "retries_exhausted"
    assert (status["retryCount"], status["maxRetries"]) == (3, 3)
    assert "MAX RETRIES EXCEEDED" in done.screen
    assert "ralph run -s S-1" in done.screen
    assert "ralph run -s S-1" in status["guidance"]
    assert [entry["Status"] for entry in entries(feature)] == ["failed"] * 3
    assert [entry["Story"].split(" - ")[0] for entry in entries(feature)] == ["S-1"] * 3
    assert not (feature / "logs" / "iteration-4.log").exists()
    fail_lines = [line for line in (feature / "progress.txt").read_text().splitlines() if line.startswith("[FAIL]")]
    assert len(fail_lines) == 3, fail_lines
    for attempt, line in enumerate(fail_lines, start=1):
        assert line.startswith("[FAIL] S-1 - ") and line.endswith(f"(attempt {attempt}/3)"), line
        assert f"tests failed in attempt {attempt}" in line
    # Every attempt started from the workspace as it was before the first: the previous attempt's commit and
    # files undone, the user's staged change and untracked file still there.
    assert [start["iteration"] for start in starts] == [1, 2, 3]
    assert [start["head"] for start in starts] == [head] * 3
    assert starts[1]["status"] == starts[0]["status"] == starts[2]["status"]
    assert {"M  tracked.txt", " M edited.txt", "?? notes.txt"} <= set(starts[2]["status"]), starts[2]
    assert not any("feature.py" in line or "scratch.txt" in line for line in starts[2]["status"])
    # Every attempt was saved and undone, the last one too: a failed story is never left half done (the human
    # finds it under its ref and in its patch, docs/guards.md).
    for number in (1, 2, 3):
        assert git_out(project, "show", f"{REF.format(number)}:src/feature.py") == f"attempt = {number}\n"
    refs = git_out(project, "for-each-ref", "--format=%(refname)", "refs/ralph/").split()
    assert refs == [REF.format(1), REF.format(2), REF.format(3)]
    assert not (project / "src" / "feature.py").exists()
    # The retry's prompt says the last attempt failed and was undone.
    retry_prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert "attempt at S-1 failed" in retry_prompt and "was undone" in retry_prompt, retry_prompt
    assert "this is attempt 2 of 3" in retry_prompt


def test_a_failed_attempt_is_recoverable_from_its_ref_and_patch(project: Path, feature: Path) -> None:
    user_work(project)
    head = git_out(project, "rev-parse", "HEAD").strip()

    # Attempt 1 fails; iteration 2 changes nothing, so the workspace stays as the undo left it.
    done = run(project, Turns(FAILING_AFTER, Turn(say="thinking\n")), n=2)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "in-progress"]
    # The workspace is back: HEAD, no agent file, the user's work kept.
    assert git_out(project, "rev-parse", "HEAD").strip() == head
    assert not (project / "src").exists()
    assert not (project / "scratch.txt").exists()
    assert_user_work_kept(project)
    assert (project / "build" / "out.txt").read_text() == "built 1\n"  # ignored files are not touched
    # The attempt: the ref holds the agent's files, and its own commit is the ref's parent.
    ref = REF.format(1)
    assert git_out(project, "show", f"{ref}:src/feature.py") == "attempt = 1\n"
    assert git_out(project, "show", f"{ref}:scratch.txt") == "scratch 1\n"
    agent_commit = git_out(project, "rev-parse", f"{ref}^").strip()
    assert git_out(project, "log", "-1", "--format=%s", agent_commit).strip() == "wip: attempt 1"
    assert "wip: attempt 1" in git_out(project, "log", "--format=%s", ref).splitlines()
    subprocess.run(["git", "merge-base", "--is-ancestor", head, agent_commit], cwd=project, check=True)
    note = entries(feature)[0]["Note"]
    assert ref in note and "iteration-1.patch" in note, note
    # The patch applies to the restored workspace and brings the attempt's files back.
    patch = feature / "logs" / "iteration-1.patch"
    git_out(project, "apply", "--check", str(patch))
    git_out(project, "apply", str(patch))
    assert (project / "src" / "feature.py").read_text() == "attempt = 1\n"
    assert (project / "scratch.txt").read_text() == "scratch 1\n"


def test_a_fail_signal_with_exit_0_is_retried(project: Path, feature: Path) -> None:
    turn = Turn(write={"half.txt": "half {n}\n"}, say="<ralph>FAIL S-1: the API schema is missing</ralph>\n")

    done = run(project, Turns(then=turn), n=10)

    assert done.outcome.reason is ExitReason.RETRIES_EXHAUSTED
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "retries_exhausted"
    assert "the API schema is missing" in status["exitMessage"]
    assert "MAX RETRIES EXCEEDED" in done.screen
    assert [entry["Status"] for entry in entries(feature)] == ["failed"] * 3
    progress = (feature / "progress.txt").read_text()
    assert "(attempt 1/3)" in progress and "(attempt 2/3)" in progress
    assert "the API schema is missing" in progress
    # Every failed attempt, the last one too, was saved and undone: nothing of a failed attempt stays in place.
    assert git_out(project, "show", f"{REF.format(1)}:half.txt") == "half 1\n"
    assert git_out(project, "show", f"{REF.format(2)}:half.txt") == "half 2\n"
    assert git_out(project, "show", f"{REF.format(3)}:half.txt") == "half 3\n"
    assert not (project / "half.txt").exists()


def test_a_story_that_fails_once_then_passes_completes(project: Path, feature: Path) -> None:
    write_prd(feature, 1)
    finish = Turn(write={"src/feature.py": "done = True\n"}, passes=["S-1"], say="finished S-1\n")

    done = run(project, Turns(FAILING, then=finish), n=5)

    assert done.outcome.reason is ExitReason.COMPLETE
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["retryCount"]) == ("complete", 0)
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "complete"]
    assert (project / "src" / "feature.py").read_text() == "done = True\n"
    assert "wip: attempt 1" not in git_out(project, "log", "--format=%s", "HEAD")
    assert git_out(project, "show", f"{REF.format(1)}:src/feature.py") == "attempt = 1\n"


def test_story_flag_works_on_that_story_only(project: Path, feature: Path) -> None:
    agent = Turns(then=Turn(write={"work-{n}.txt": "work\n"}, passes=["S-2"], say="finished\n"))

    done = run(project, agent, n=5, story="S-2")

    assert done.outcome.reason is ExitReason.STORY_DONE
    assert read_json(feature / "status.json")["exitReason"] == "story_done"
    assert [launch.command.env["RALPH_TASK_ID"] for launch in agent.launches] == ["S-2"]
    stories = {story["id"]: story["passes"] for story in read_json(feature / "prd.json")["userStories"]}
    assert stories == {"S-1": False, "S-2": True, "S-3": False}
