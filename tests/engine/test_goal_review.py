"""Review of goal mode, lifecycle hooks and quality gates, in-process: bugs a user would hit, shown with runs built
as `ralph run` builds them in real git repositories (hooks and gates real commands), the agent's turns played back.
Each test names a bug the review found. Ctrl+C while hooks run and a hook id too long for its log's name (the CLI's
one-line error) are tests/integration/test_goal_review.py's.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from ralphloop.core.runner import Launch
from tests.conftest import read_json, write_prd
from tests.engine.goal import run_goal
from tests.engine.harness import Turn, Turns, ralph, run
from tests.integration.helpers import wait_until
from tests.integration.test_goal_mode import progress_yaml, sprint_yaml, write_sprint
from tests.integration.test_goal_review import configure, result_block
from tests.integration.test_story_specs import commit_all, spec, write_specs

FAILING_GATE = "quality_checks:\n  tests: echo 'FAILED test_login'; exit 1\n"

# ---------------------------------------------------------------- gates skipped after an unclean run


def test_a_gate_runs_when_a_failed_agent_run_leaves_every_story_passing(
    project: Path, feature: Path, tmp_path: Path
) -> None:
    write_prd(feature, 1)
    gate_runs = tmp_path / "gate.runs"
    configure(project, f"quality_checks:\n  tests: echo ran >> {shlex.quote(str(gate_runs))}; exit 1\n")
    # the agent sets passes: true, then crashes (exit 1): a failed run, the story file says done
    crash = Turn(passes=["S-1"], say="done, then a crash", exit=1)

    done = run(project, Turns(then=crash), n=2)

    # a story passes, and the loop completes, only when every gate passes: this gate never does
    assert read_json(feature / "status.json")["exitReason"] != "complete", done.screen
    assert done.outcome.reason.exit_code != 0, done.screen
    assert gate_runs.exists(), "the quality gate never ran"


def test_completion_trust_in_goal_mode_ignores_a_claim_from_a_failed_run(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    configure(project, "completion: trust\n")
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="min-iterations: 5\n"))

    done = run_goal(project, Turns(then=Turn(say="<promise>COMPLETE</promise>", exit=1)), n=2)

    assert read_json(folder / "status.json")["exitReason"] != "complete", done.screen
    assert done.outcome.reason.exit_code != 0, done.screen
    assert progress_yaml(folder)["status"] != "completed"


# ---------------------------------------------------------------- every task done, a gate failing


def test_a_story_ralph_marked_done_is_reopened_when_its_gate_fails(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    write_specs(project, {"1.1": spec("1.1")})
    configure(project, FAILING_GATE)
    commit_all(project, ralph_env)
    # "it was already there": a DONE tag, no file changed
    already = Turn(say="It was already there.\n<ralph>DONE 1.1</ralph>")

    done = run(project, Turns(then=already), n=3, feature=None)

    assert "internal error" not in done.screen, done.screen
    assert "Traceback" not in done.screen
    assert done.outcome.reason.exit_code == 1, done.screen
    story = (project / "specs" / "epic-1" / "story-1.1-slug-1-1.md").read_text()
    assert "status: pending" in story, story  # its gate fails: the story does not pass


def test_every_story_done_with_a_failing_gate_and_no_git_is_not_a_crash(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "nogit"
    root.mkdir()
    monkeypatch.chdir(root)

    assert ralph("init", "feat").code == 0
    feature = root / ".ralph" / "feat"
    write_prd(feature, 1)
    configure(root, "git:\n  require: false\n" + FAILING_GATE)

    done = run(root, Turns(then=Turn(passes=["S-1"], say="S-1 done")), n=3)

    assert "internal error" not in done.screen, done.screen
    assert done.outcome.reason.exit_code == 1, done.screen
    assert read_json(feature / "status.json")["exitReason"] != "complete"


# ---------------------------------------------------------------- PROGRESS.yaml edited by the agent


def edit_progress(folder: Path) -> Turn:
    """An agent that fills in PROGRESS.yaml's ralph-exit itself and prints no JSON result."""

    def edit(launch: Launch) -> None:
        path = folder / "PROGRESS.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["status"] = "completed"
        data["ralph-exit"] = {"detected-at": "2026-01-01T00:00:00Z", "iteration": 1, "final-summary": "I say so"}
        path.write_text(yaml.safe_dump(data), encoding="utf-8")

    return Turn(first=edit, say="I filled in ralph-exit myself; no JSON result.\n")


def test_the_agent_cannot_complete_the_goal_by_editing_progress_yaml(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="min-iterations: 3\n"))

    done = run_goal(project, Turns(then=edit_progress(folder)), n=2)

    assert read_json(folder / "status.json")["exitReason"] != "complete", done.screen
    assert done.outcome.reason.exit_code != 0, done.screen


def test_an_edited_progress_yaml_and_a_failing_gate_are_not_a_crash(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    configure(project, FAILING_GATE)
    folder = write_sprint(project, ralph_env, sprint_yaml())

    done = run_goal(project, Turns(then=edit_progress(folder)), n=3)

    assert "internal error" not in done.screen, done.screen
    assert "Traceback" not in done.screen
    assert done.outcome.reason.exit_code == 1, done.screen


# ---------------------------------------------------------------- background hooks and the breaker


def previous_hook_done(project: Path) -> Turn:
    """An agent that changes nothing; each launch begins once the previous iteration's background hook has written
    LEARNINGS.md (the hook ends while the agent works, as with a real agent that takes its time)."""

    def after_the_hook(launch: Launch) -> None:
        previous = int(launch.command.env["RALPH_ITERATION"]) - 1
        learnings = project / "LEARNINGS.md"
        wrote = f"learned in iteration {previous}\n"
        assert previous < 1 or wait_until(lambda: learnings.exists() and wrote in learnings.read_text()), previous

    said = "I looked around and changed nothing.\n" + result_block({"status": "continue", "summary": "looked around"})
    return Turn(first=after_the_hook, say=said + "\n")


def test_a_background_hook_writing_a_file_is_not_the_agents_progress(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    hooks = """\
    - id: learning
      command: sleep 0.5; echo "learned in iteration $ITERATION" >> LEARNINGS.md
      parallel: true
    """
    folder = write_sprint(project, ralph_env, sprint_yaml(hooks=hooks))

    done = run_goal(project, Turns(then=previous_hook_done(project)), n=6)

    # Without the hook this run stops with circuit_open (3 iterations without progress); a file the background
    # hook writes while an idle agent plans must not keep the loop alive. (It is still listed among the
    # iteration's changed files: ralph cannot tell who wrote it.)
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "circuit_open", done.screen


# ---------------------------------------------------------------- a JSON result ralph cannot write


def test_a_lone_surrogate_in_the_json_result_neither_crashes_nor_breaks_progress_yaml(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    # the text as the agent prints it: a JSON escape for half a surrogate pair (a cut-off emoji)
    body = '{"status": "continue", "pendingSteps": [{"id": null, "prompt": "fix the \\ud83d button"}]}'
    cut_off = Turn(say="```json\n" + body + "\n```")

    done = run_goal(project, Turns(then=cut_off), n=1)
    again = run_goal(project, Turns(then=cut_off), n=1)

    assert "internal error" not in done.screen, done.screen
    assert "invalid YAML" not in again.screen, again.screen
    assert "internal error" not in again.screen, again.screen
    assert [step["id"] for step in progress_yaml(folder)["dynamic-steps"]] == ["step-0"]


# ---------------------------------------------------------------- SPRINT.yaml mid-edit when the agent ends


def test_the_iterations_result_is_kept_when_sprint_yaml_is_mid_edit(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    sprint = folder / "SPRINT.yaml"

    def half_typed(launch: Launch) -> None:  # the user, half-way through an edit of the goal
        sprint.write_text(sprint.read_text(encoding="utf-8").replace("goal: |", "goal: [half-typed"), encoding="utf-8")

    result = {"status": "continue", "summary": "planned", "pendingSteps": [{"id": None, "prompt": "write a.txt"}]}
    planned = Turn(first=half_typed, say=result_block(result) + "\n")

    done = run_goal(project, Turns(then=planned), n=2)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert "sprints/auth/SPRINT.yaml: invalid YAML" in done.screen
    steps = progress_yaml(folder)["dynamic-steps"]
    assert [(step["id"], step["prompt"]) for step in steps] == [("step-0", "write a.txt")], steps
