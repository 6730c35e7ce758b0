"""Goal mode as a user of seed 001 knows it (issue 21: their commands never silently mean something else), with the
real `ralph run` in a real git repository and the goal agent of test_goal_mode.py:

- iterations without new steps lead to a reflecting iteration before the circuit breaker may stop the goal, with
  the default settings; the breaker still stops a goal whose reflecting changes nothing;
- a plugin workflow hook (`workflow: "m42-signs:learning-extraction"`) is that slash command, run by the agent on
  the iteration's transcript; a local workflow's refusal says what a local workflow may be;
- stats.max-iterations is the run's limit (`unlimited`, or the number), never null;
- every screen counts the steps, never the goal itself.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import AGENTS, PYTHON, RalphRunner, read_json
from tests.integration.helpers import assert_one_line_error, snapshot
from tests.integration.test_goal_mode import (
    SPRINT_DIR,
    hook_runs,
    modes,
    progress_yaml,
    run_goal,
    sprint_yaml,
    write_sprint,
)


def output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


# ------------------------------------------------------------------ idle-threshold before the breaker


@pytest.mark.parametrize("threshold", [None, 5], ids=["default", "above-the-breaker"])
def test_iterations_without_new_steps_lead_to_reflecting_before_the_breaker_stops_the_goal(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, threshold: int | None
) -> None:
    # No config: the breaker opens after 3 iterations without progress, and idle-threshold is 3 (or 5, above it).
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph=f"idle-threshold: {threshold}\n" if threshold else ""))
    log = tmp_path / "goal.log"

    done = run_goal(ralph, GOAL_LOG=str(log), GOAL_STEPS="")  # planning adds nothing; reflecting completes

    assert done.returncode == 0, output(done)
    planning = threshold or 3
    assert modes(log) == [f"{n} planning -" for n in range(1, planning + 1)] + [f"{planning + 1} reflecting -"]
    assert "circuit breaker open" not in output(done)
    assert read_json(folder / "status.json")["exitReason"] == "complete"
    assert progress_yaml(folder)["ralph-exit"]["iteration"] == planning + 1


def test_the_breaker_stops_a_goal_whose_reflecting_changes_nothing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    log = tmp_path / "goal.log"

    done = run_goal(ralph, GOAL_LOG=str(log), GOAL_STEPS="", GOAL_REFLECT_NOTHING="1")

    assert done.returncode == 1, output(done)
    assert modes(log) == ["1 planning -", "2 planning -", "3 planning -", "4 reflecting -"]
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "circuit_open"
    assert "no progress in 4 iterations in a row" in status["exitMessage"]
    assert read_json(folder / ".circuit_breaker_state")["state"] == "OPEN"


def test_executing_without_progress_opens_the_breaker_at_its_own_threshold(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    log = tmp_path / "goal.log"

    done = run_goal(ralph, GOAL_LOG=str(log), GOAL_STUCK="1")  # plans two steps, then never finishes one

    assert done.returncode == 1, output(done)
    assert modes(log) == ["1 planning -", "2 executing step-0", "3 executing step-0", "4 executing step-0"]
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "circuit_open"
    assert "no progress in 3 iterations in a row" in status["exitMessage"]


# ------------------------------------------------------------------ workflow hooks

# Records every slash-command prompt (a hook's) and exits 3 for the `broken:` plugin; any other prompt goes to the
# goal agent, so the loop works.
PLUGIN_AGENT = """\
import json, os, subprocess, sys
prompt = sys.stdin.read()
if prompt.startswith("/"):
    with open(sys.argv[1], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"iteration": int(os.environ["RALPH_ITERATION"]), "prompt": prompt}) + "\\n")
    sys.exit(3 if prompt.startswith("/broken:") else 0)
sys.exit(subprocess.run([sys.executable, sys.argv[2]], input=prompt, text=True, check=False).returncode)
"""


def test_a_plugin_workflow_hook_runs_its_slash_command_on_the_transcript_and_a_failure_never_stops_the_loop(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
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
    script, record = tmp_path / "plugin_agent.py", tmp_path / "slash.jsonl"
    script.write_text(PLUGIN_AGENT)
    agent = shlex.join([PYTHON, str(script), str(record), str(AGENTS / "goal_agent.py")])

    done = run_goal(ralph, cmd=agent, GOAL_STEPS="the only step")

    assert done.returncode == 0, output(done)
    assert read_json(folder / "status.json")["exitReason"] == "complete"
    slash = sorted((line["iteration"], line["prompt"]) for line in map(json.loads, record.read_text().splitlines()))
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
    assert "broken (iteration 1): exit 3" in output(done)  # logged, as a warning
    listed = [(hook["id"], hook.get("workflow")) for hook in data["per-iteration-hooks"]]
    assert listed == [("learning", "m42-signs:learning-extraction"), ("broken", "broken:plugin")]


WORKFLOW_REFUSALS: dict[str, tuple[dict[str, str], str, tuple[str, ...]]] = {
    "no file": ({}, "doc-update", (".claude/workflows/doc-update.yaml", "a prompt, a command, or phases", "plugin")),
    "phases without prompts": (
        {"doc-update.yaml": "phases:\n  - id: write\n    workflow: other\n"},
        "doc-update",
        (".claude/workflows/doc-update.yaml", "`prompt`, a `command`, or `phases` with a `prompt` each"),
    ),
    "a plugin name that is also a file": (
        {"m42-signs:learning-extraction.yaml": "prompt: Summarise it.\n"},
        '"m42-signs:learning-extraction"',
        ("learning", ".claude/workflows/m42-signs:learning-extraction.yaml exists", "rename the file"),
    ),
}


@pytest.mark.parametrize("case", list(WORKFLOW_REFUSALS))
def test_a_workflow_hook_ralph_cannot_run_is_refused_saying_what_it_runs(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, case: str
) -> None:
    files, name, needles = WORKFLOW_REFUSALS[case]
    for file_name, text in files.items():
        (project / ".claude" / "workflows").mkdir(parents=True, exist_ok=True)
        (project / ".claude" / "workflows" / file_name).write_text(text)
    write_sprint(project, ralph_env, sprint_yaml(hooks=f"- id: learning\n  workflow: {name}\n"))
    log = tmp_path / "goal.log"
    before = snapshot(project)

    done = run_goal(ralph, GOAL_LOG=str(log))

    assert_one_line_error(done, *needles)
    assert not log.exists()  # the agent never ran
    assert snapshot(project) == before


# ------------------------------------------------------------------ stats.max-iterations


def test_stats_max_iterations_is_the_runs_limit(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())

    first = run_goal(ralph, GOAL_NEEDS_HUMAN="2")  # no limit: a goal runs until it is reached

    assert first.returncode == 1, output(first)
    assert "Iteration 2 / unlimited" in first.stdout
    stats = progress_yaml(folder)["stats"]
    assert (stats["current-iteration"], stats["max-iterations"]) == (2, "unlimited")

    second = run_goal(ralph, "-n", "1")  # reads `unlimited` back, and writes this run's limit

    assert second.returncode == 1, output(second)
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations"
    stats = progress_yaml(folder)["stats"]
    assert (stats["current-iteration"], stats["max-iterations"]) == (3, 1)


# ------------------------------------------------------------------ step counts


def test_every_screen_counts_the_steps_without_the_goal(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n"))

    done = run_goal(ralph, GOAL_STEPS="write a,write b,write c,write d")

    assert done.returncode == 0, output(done)
    lines = done.stdout.splitlines()
    assert "0/0 steps done" in lines[0]  # the start banner: no step planned yet
    assert any("step-0 done · 1/4 · " in line for line in lines), done.stdout
    assert "✓ ALL COMPLETE! 4/4 steps done" in done.stdout
    summary = next(line for line in lines if line.startswith("Summary:"))
    assert "· 4/4 steps ·" in summary
    assert "5/5" not in done.stdout and "/5 steps" not in done.stdout
    status = read_json(folder / "status.json")
    assert (status["storiesComplete"], status["storiesTotal"]) == (4, 4)
    shown = ralph("status", "-f", SPRINT_DIR)
    assert shown.returncode == 0, output(shown)
    assert "Steps:      4 / 4 done" in shown.stdout
    assert "goal itself" not in shown.stdout
    watched = ralph("monitor", "-f", SPRINT_DIR)
    assert watched.returncode == 0, output(watched)
    assert "Progress:   4/4 steps done" in watched.stdout
    assert " · 4/4 done · " in watched.stdout.splitlines()[0]
