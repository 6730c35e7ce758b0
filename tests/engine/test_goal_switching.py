"""Goal mode as a user of seed 001 knows it (issue 21: their commands never silently mean something else), in-process:
runs built as `ralph run sprints/auth/` builds them, in a real git repository, the goal agent played back
(tests/engine/goal.py):

- iterations without new steps lead to a reflecting iteration before the circuit breaker may stop the goal, with
  the default settings; the breaker still stops a goal whose reflecting changes nothing;
- a plugin workflow hook (`workflow: "m42-signs:learning-extraction"`) is that slash command, run by the agent on
  the iteration's transcript;
- stats.max-iterations is the run's limit (`unlimited`, or the number), never null;
- every screen counts the steps, never the goal itself.

A local workflow's refusal (one error line saying what a local workflow may be) is
tests/integration/test_goal_switching.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.runner import Launch
from ralphloop.processes.replay import Recording
from tests.conftest import read_json
from tests.engine.goal import GoalAgent, hook_runs, run_goal
from tests.engine.harness import Turns, ralph
from tests.integration.test_goal_mode import SPRINT_DIR, progress_yaml, sprint_yaml, write_sprint

# ------------------------------------------------------------------ idle-threshold before the breaker


@pytest.mark.parametrize("threshold", [None, 5], ids=["default", "above-the-breaker"])
def test_iterations_without_new_steps_lead_to_reflecting_before_the_breaker_stops_the_goal(
    project: Path, home: Path, ralph_env: dict[str, str], threshold: int | None
) -> None:
    # No config: the breaker opens after 3 iterations without progress, and idle-threshold is 3 (or 5, above it).
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph=f"idle-threshold: {threshold}\n" if threshold else ""))
    agent = GoalAgent(steps="")  # planning adds nothing; reflecting completes

    done = run_goal(project, agent)

    assert done.outcome.reason.exit_code == 0, done.screen
    planning = threshold or 3
    assert agent.modes == [f"{n} planning -" for n in range(1, planning + 1)] + [f"{planning + 1} reflecting -"]
    assert "circuit breaker open" not in done.screen
    assert read_json(folder / "status.json")["exitReason"] == "complete"
    assert progress_yaml(folder)["ralph-exit"]["iteration"] == planning + 1


def test_the_breaker_stops_a_goal_whose_reflecting_changes_nothing(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    agent = GoalAgent(steps="", reflect_nothing=True)

    done = run_goal(project, agent)

    assert done.outcome.reason is ExitReason.CIRCUIT_OPEN and done.outcome.reason.exit_code == 1, done.screen
    assert agent.modes == ["1 planning -", "2 planning -", "3 planning -", "4 reflecting -"]
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "circuit_open"
    assert "no progress in 4 iterations in a row" in status["exitMessage"]
    assert read_json(folder / ".circuit_breaker_state")["state"] == "OPEN"


def test_executing_without_progress_opens_the_breaker_at_its_own_threshold(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    agent = GoalAgent(stuck=True)  # plans two steps, then never finishes one

    done = run_goal(project, agent)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert agent.modes == ["1 planning -", "2 executing step-0", "3 executing step-0", "4 executing step-0"]
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "circuit_open"
    assert "no progress in 3 iterations in a row" in status["exitMessage"]


# ------------------------------------------------------------------ workflow hooks


@dataclass
class SlashCommands:
    """The goal agent, except that a slash command (a hook's prompt) does nothing and exits 3 for the `broken:`
    plugin, 0 for any other; `Turns.launches` keeps every prompt."""

    goal: GoalAgent

    def recording(self, launch: Launch) -> Recording:
        prompt = launch.command.stdin.decode()
        if prompt.startswith("/"):
            return Recording(b"", exit_code=3 if prompt.startswith("/broken:") else 0)
        return self.goal.recording(launch)


def test_a_plugin_workflow_hook_runs_its_slash_command_on_the_transcript_and_a_failure_never_stops_the_loop(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    hooks = """\
    - id: learning
      workflow: "m42-signs:learning-extraction"
      parallel: true
    - id: broken
      workflow: "broken:plugin"
      parallel: false
    """
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n", hooks=hooks))
    agent = Turns(then=SlashCommands(GoalAgent(steps="the only step")))

    done = run_goal(project, agent)

    assert done.outcome.reason.exit_code == 0, done.screen
    assert read_json(folder / "status.json")["exitReason"] == "complete"
    prompts = [(int(launch.command.env["RALPH_ITERATION"]), launch.command.stdin.decode()) for launch in agent.launches]
    slash = sorted((number, prompt) for number, prompt in prompts if prompt.startswith("/"))
    transcripts = {n: folder / "logs" / f"iteration-{n}.log" for n in (1, 2, 3)}
    assert slash == sorted(
        [(n, f"/m42-signs:learning-extraction {path}") for n, path in transcripts.items()]
        + [(n, f"/broken:plugin {path}") for n, path in transcripts.items()]
    )
    assert (folder / "logs" / "hooks" / "learning-2.prompt.md").read_text() == (
        f"/m42-signs:learning-extraction {transcripts[2]}"
    )
    data = progress_yaml(folder)
    assert [(run["iteration"], run["status"], run["exit-code"]) for run in hook_runs(data, "learning")] == [
        (1, "completed", 0),
        (2, "completed", 0),
        (3, "completed", 0),
    ]
    assert [(run["iteration"], run["status"], run["exit-code"]) for run in hook_runs(data, "broken")] == [
        (1, "failed", 3),
        (2, "failed", 3),
        (3, "failed", 3),
    ]
    assert "broken (iteration 1): exit 3" in done.screen  # logged, as a warning
    listed = [(hook["id"], hook.get("workflow")) for hook in data["per-iteration-hooks"]]
    assert listed == [("learning", "m42-signs:learning-extraction"), ("broken", "broken:plugin")]


# ------------------------------------------------------------------ stats.max-iterations


def test_stats_max_iterations_is_the_runs_limit(project: Path, home: Path, ralph_env: dict[str, str]) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())

    first = run_goal(project, GoalAgent(needs_human=2))  # no limit: a goal runs until it is reached

    assert first.outcome.reason.exit_code == 1, first.screen
    assert "Iteration 2 / unlimited" in first.screen
    stats = progress_yaml(folder)["stats"]
    assert (stats["current-iteration"], stats["max-iterations"]) == (2, "unlimited")

    second = run_goal(project, GoalAgent(), n=1)  # reads `unlimited` back, and writes this run's limit

    assert second.outcome.reason.exit_code == 1, second.screen
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations"
    stats = progress_yaml(folder)["stats"]
    assert (stats["current-iteration"], stats["max-iterations"]) == (3, 1)


# ------------------------------------------------------------------ step counts


def test_every_screen_counts_the_steps_without_the_goal(project: Path, home: Path, ralph_env: dict[str, str]) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n"))

    done = run_goal(project, GoalAgent(steps="write a,write b,write c,write d"))

    assert done.outcome.reason.exit_code == 0, done.screen
    lines = done.screen.splitlines()
    assert "0/0 steps done" in lines[0]  # the start banner: no step planned yet
    assert any("step-0 done · 1/4 · " in line for line in lines), done.screen
    assert "✓ ALL COMPLETE! 4/4 steps done" in done.screen
    summary = next(line for line in lines if line.startswith("Summary:"))
    assert "· 4/4 steps ·" in summary
    assert "5/5" not in done.screen and "/5 steps" not in done.screen
    status = read_json(folder / "status.json")
    assert (status["storiesComplete"], status["storiesTotal"]) == (4, 4)
    shown = ralph("status", "-f", SPRINT_DIR)
    assert shown.code == 0, shown.out + shown.err
    assert "Steps:      4 / 4 done" in shown.out
    assert "goal itself" not in shown.out
    watched = ralph("monitor", "-f", SPRINT_DIR)
    assert watched.code == 0, watched.out + watched.err
    assert "Progress:   4/4 steps done" in watched.out
    assert " · 4/4 done · " in watched.out.splitlines()[0]
