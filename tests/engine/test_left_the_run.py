"""An agent that leaves the run — switches branch, rewrites the history the iteration began with, or leaves a
merge waiting — has made a failed attempt, saved and undone; nothing it claimed in it counts, in any task
format or completion mode (found in review: the story spec, the goal and trust mode still took its claim after
the undo, and the run ended ALL COMPLETE). The git side of the undo is tests/engine/test_undo_git_states.py.

In-process runs built as `ralph run` builds them (harness.py), real git, the agent's turns (its git commands
included, harness_git.py) played back.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import read_json
from tests.engine.goal import run_goal
from tests.engine.harness import Turn, Turns, git_out, run
from tests.engine.harness_git import GitTurn
from tests.engine.test_reports_true import passing, prepared
from tests.integration.test_goal_mode import SPRINT_DIR, progress_yaml, sprint_yaml, write_sprint
from tests.integration.test_story_specs import commit_all, spec, write_specs

SWITCH = [["switch", "-q", "-c", "agent-branch"]]
AMEND = [["add", "-A"], ["commit", "-q", "--amend", "-m", "the agent's amend"]]


def test_a_story_done_in_an_attempt_that_rewrote_history_is_not_marked_done(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    write_specs(project, {"1.1": spec("1.1"), "1.2": spec("1.2")})
    commit_all(project, ralph_env)
    rewrites = GitTurn(Turn(write={"one.txt": "1\n"}, say="<ralph>DONE 1.1</ralph>\n"), git=AMEND)

    done = run(project, Turns(rewrites, then=Turn()), feature=None, n=1)

    out = done.screen
    assert done.outcome.reason.exit_code == 1 and "ALL COMPLETE" not in out, out
    assert "✗ 1.1 failed (the agent rewrote the branch's history" in out, out
    text = next((project / "specs" / "epic-1").glob("story-1.1-*.md")).read_text()
    assert "status: pending" in text and "status: done" not in text
    assert "[DONE] Story 1.1" not in (project / "progress.txt").read_text()
    assert "1.1" not in read_json(project / ".ralph" / "state.json").get("completed_stories", [])
    assert not (project / "one.txt").exists()


def test_a_goal_completed_on_a_branch_of_the_agents_own_is_not_complete(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    result = '```json\n{"status": "goal-complete", "completedStepIds": [], "pendingSteps": []}\n```\n'
    leaves = GitTurn(Turn(write={"a.txt": "a\n", "b.txt": "b\n"}, say=result), git=SWITCH)

    done = run_goal(project, Turns(leaves, then=Turn()), n=2)

    out = done.screen
    assert done.outcome.reason.exit_code == 1 and "ALL COMPLETE" not in out, out
    assert "left the run's branch" in out
    assert progress_yaml(folder).get("ralph-exit") in (None, {}) or "goal-complete" not in json.dumps(
        progress_yaml(folder)["ralph-exit"]
    )
    assert git_out(project, "symbolic-ref", "--short", "HEAD").strip() != "agent-branch"
    assert (project / SPRINT_DIR / "SPRINT.yaml").exists()


def test_trust_mode_takes_no_promise_from_an_attempt_that_left_the_branch(project: Path, home: Path) -> None:
    folder = prepared(project, config="completion: trust\n")
    leaves = GitTurn(Turn(write={"x.txt": "x\n"}, say="<promise>COMPLETE</promise>\n"), git=SWITCH)

    done = run(project, Turns(leaves, then=Turn()), n=2)

    out = done.screen
    assert done.outcome.reason.exit_code == 1 and "ALL COMPLETE" not in out, out
    assert passing(folder) == []
    assert git_out(project, "symbolic-ref", "--short", "HEAD").strip() == "feature/feat"
