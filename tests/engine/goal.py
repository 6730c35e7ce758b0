"""Goal mode in-process: tests/agents/goal_agent.py as a plan the replay runner plays, and the helpers of the goal
tests (tests/engine/test_goal_mode.py, test_goal_switching.py).

The agent reads its mode from the prompt each launch gets, as the script reads it from stdin, and answers with a
JSON result; the step it works on is written in the project before its output ends. A prompt hook's launch is one
of its launches too (it answers "continue" to a prompt without a mode), so every prompt the agent was given is in
`Turns.launches`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ralphloop.core.runner import Launch
from ralphloop.processes.replay import Recording
from tests.engine.harness import Ran, Turns, run
from tests.integration.test_goal_mode import SPRINT_DIR


@dataclass
class GoalAgent:
    """tests/agents/goal_agent.py, its environment switches as fields: planning adds `steps` (comma-separated) when
    the prompt lists none yet; executing writes `<step>.txt` and reports the step done (unless `stuck`); reflecting
    reports goal-complete (unless `reflect_nothing`). `always_complete` claims goal-complete every time;
    `needs_human`, `bad_json` and `no_json` name the iteration that asks for a human, prints a malformed result or
    none. `modes` gets "<iteration> <mode> <focus>" per launch (the script's GOAL_LOG)."""

    steps: str = "write a.txt,write b.txt"
    always_complete: bool = False
    needs_human: int | None = None
    bad_json: int | None = None
    no_json: int | None = None
    stuck: bool = False
    reflect_nothing: bool = False
    modes: list[str] = field(default_factory=list)

    def recording(self, launch: Launch) -> Recording:
        prompt = launch.command.stdin.decode()
        iteration = int(launch.command.env["RALPH_ITERATION"])
        mode = re.search(r"^## Mode: (\w+)", prompt, re.MULTILINE)
        mode_name = mode.group(1) if mode else "unknown"
        focus = re.search(r"^Work on (step-\d+), and only on it:", prompt, re.MULTILINE)
        step = focus.group(1) if focus else "-"
        self.modes.append(f"{iteration} {mode_name} {step}")
        edits: dict[str, str | None] = {}
        result: dict[str, object] = {"status": "continue", "summary": f"iteration {iteration} ({mode_name})"}
        if self.always_complete:
            result = {"status": "goal-complete", "summary": "done, I think", "goalCompleteSummary": "all of it"}
        elif iteration == self.needs_human:
            result = {
                "status": "needs-human",
                "summary": "blocked",
                "humanNeeded": {"reason": "DATABASE_URL is not set", "details": "add it to .env and run again"},
            }
        elif mode_name == "planning" and "(none yet)" in prompt:
            result["pendingSteps"] = [{"id": None, "prompt": text} for text in self.steps.split(",")]
        elif mode_name == "executing" and step != "-" and not self.stuck:
            edits[f"{step}.txt"] = f"done in iteration {iteration}\n"
            result["completedStepIds"] = [step]
        elif mode_name == "reflecting" and not self.reflect_nothing:
            result = {"status": "goal-complete", "summary": "checked", "goalCompleteSummary": "both files written"}
        said = f"goal agent: iteration {iteration}, {mode_name}\n"
        if iteration == self.no_json:
            said += "I forgot the result block.\n"
        elif iteration == self.bad_json:
            said += '```json\n{"status": "continue", "completedStepIds": [\n```\n'
        else:
            said += "```json\n" + json.dumps(result, indent=2) + "\n```\n"
        return Recording(said.encode(), edits=edits)


def run_goal(project: Path, agent: GoalAgent | Turns, **how: Any) -> Ran:
    """`ralph run sprints/auth/` in-process (harness.run), `agent` playing every launch."""
    return run(project, agent if isinstance(agent, Turns) else Turns(then=agent), target=f"{SPRINT_DIR}/", **how)


def hook_runs(data: dict[str, Any], hook_id: str) -> list[dict[str, Any]]:
    """hook-tasks of one hook, by iteration."""
    runs = [task for task in data["hook-tasks"] if task["hook-id"] == hook_id]
    return sorted(runs, key=lambda task: task["iteration"])


def prompt_of(folder: Path, number: int) -> str:
    return (folder / "logs" / f"iteration-{number}.prompt.md").read_text()


def given(agent: Turns) -> list[dict[str, Any]]:
    """What tests/agents/record_env.py records of every launch: the prompt, the RALPH_* variables, the folder."""
    return [
        {
            "prompt": launch.command.stdin.decode(),
            "env": {key: value for key, value in launch.command.env.items() if key.startswith("RALPH_")},
            "cwd": launch.cwd,
        }
        for launch in agent.launches
    ]
