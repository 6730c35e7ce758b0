"""A second look at "every report true", as a demanding user would try it, in-process: runs built as `ralph run`
builds them, their agents played back (harness.py, harness_git.py, goal.py), their screens drawn by the real
renderer, in real git repositories; `ralph status` and `ralph monitor` read the records in this process too. Each
test names a report that was still false. The commands ralph prints that must work when pasted are
tests/integration/test_reports_true_review.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import read_json
from tests.engine.goal import GoalAgent, run_goal
from tests.engine.harness import STORY, Turn, Turns, git_out, metrics, ralph, run
from tests.engine.harness_git import GitTurn
from tests.engine.test_reports_true import LIMITED, passing, prepared
from tests.engine.test_seed_users import SPEC_DONE
from tests.integration.test_goal_mode import progress_yaml, sprint_yaml, write_sprint
from tests.integration.test_story_specs import commit_all, spec, write_specs


def test_a_one_story_run_of_a_story_that_already_passes_says_so_and_does_not_complete_the_feature(
    project: Path, home: Path
) -> None:
    folder = prepared(project)
    prd = read_json(folder / "prd.json")
    prd["userStories"][1]["passes"] = True
    (folder / "prd.json").write_text(json.dumps(prd, indent=2))
    git_out(project, "commit", "-qam", "S-2 done")

    done = run(project, Turns(then=STORY), story="S-2")

    assert done.outcome.reason.exit_code == 0, done.screen
    assert "ALL COMPLETE" not in done.screen
    assert "✓ STORY S-2 done" in done.screen and "2 other tasks still open" in done.screen
    status = json.loads(ralph("status", "-f", "feat", "--json").out)
    assert (status["status"], status["exitReason"]) == ("story_done", "story_done")
    assert passing(folder) == ["S-2"]


def test_a_goal_step_whose_quality_gate_fails_is_not_committed(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    (project / ".ralph").mkdir()
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: true\nquality_checks:\n  tests: exit 1\n")
    folder = write_sprint(project, ralph_env, sprint_yaml())
    head = git_out(project, "rev-parse", "HEAD")

    done = run_goal(project, GoalAgent(), n=2)

    assert "steps not completed, the quality checks fail: tests (step-0)" in done.screen, done.screen
    assert "committed" not in done.screen
    assert git_out(project, "rev-parse", "HEAD") == head
    assert (project / "step-0.txt").exists()  # kept for the agent to fix, uncommitted
    assert [step["status"] for step in progress_yaml(folder)["dynamic-steps"]] == ["pending", "pending"]
    line = metrics(folder)[1]
    assert (line["task_id"], line["success"]) == ("step-0", False)


def test_the_screen_does_not_call_a_story_open_when_a_usage_limited_call_left_it_passing(
    project: Path, home: Path
) -> None:
    prepared(project, stories=2, config="usage_limit:\n  policy: wait\n  margin_seconds: 0\n")
    limited = Turn(passes=["S-1"], say=LIMITED, exit=1)  # a reset long past

    done = run(project, Turns(limited, then=Turn()), n=1)

    first = done.screen.split("── Iteration 1", 1)[1].splitlines()[1]
    # and the call's mark on S-1 is put back: a call that did not count marks no task done
    assert first.startswith("  ⚠ S-1: usage limit, not counted · 0/2 · "), done.screen


def test_status_and_monitor_say_when_their_counts_are_a_narrowed_runs_not_the_features(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    write_specs(project, {story: spec(story) for story in ("1.1", "1.2", "2.1")})
    commit_all(project, ralph_env)

    done = run(project, Turns(then=SPEC_DONE), feature=None, story="1.2")

    assert done.outcome.reason.exit_code == 0 and "✓ STORY 1.2 done" in done.screen, done.screen
    stories = next(line for line in ralph("status").out.splitlines() if line.startswith("Stories:"))
    assert stories == "Stories:    1 / 1 done  [##########]  (story 1.2 only: the last run was narrowed)"
    monitor = ralph("monitor").out
    assert "Progress:   1/1 stories done (story 1.2 only: the last run was narrowed)" in monitor, monitor
    assert "1/1 done (story 1.2 only)" in monitor, monitor


def test_an_iteration_that_breaks_the_task_file_is_not_committed(project: Path, home: Path) -> None:
    folder = prepared(project, config="git:\n  auto_commit: true\n")
    head = git_out(project, "rev-parse", "HEAD")
    broken = Turn(write={"a.txt": "a\n", ".ralph/feat/prd.json": '{"userStories": ['})

    done = run(project, Turns(broken, then=Turn()), n=3)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert "task file invalid after this iteration" in done.screen
    assert "committed" not in done.screen
    assert git_out(project, "rev-parse", "HEAD") == head
    assert (folder / "prd.json").read_text() == '{"userStories": ['  # left for the user to see and fix
    [line] = metrics(folder)
    assert line["success"] is False


# The agent amends the run's last commit, switches to a branch of its own and fails.
AMEND_AND_SWITCH = GitTurn(
    Turn(write={"amended.txt": "x\n"}, exit=5),
    git=[
        ["add", "-A"],
        ["commit", "-q", "--amend", "-m", "rewritten by the agent"],
        ["checkout", "-q", "-b", "agent-branch"],
    ],
)


def test_a_failed_attempt_that_rewrote_and_left_the_runs_branch_is_undone_on_that_branch(
    project: Path, home: Path
) -> None:
    prepared(project)
    head = git_out(project, "rev-parse", "HEAD").strip()

    done = run(project, Turns(AMEND_AND_SWITCH), n=1)

    assert "then undone" in done.screen, done.screen
    assert git_out(project, "branch", "--show-current").strip() == "feature/feat"
    assert git_out(project, "rev-parse", "feature/feat").strip() == head  # the amend is not left on it
    assert not (project / "amended.txt").exists()
    assert git_out(project, "for-each-ref", "refs/ralph/attempts/")  # the attempt is saved
