"""Goal mode's cost per iteration (ralph's own time: wall minus the agent's), over 30 iterations of an
instant agent that adds a step and completes one each time:

- a fresh goal workspace;
- the same with a sequential command hook (`true`), a parallel one and a quality gate (`true`) each iteration;
- a PROGRESS.yaml that already holds 500 steps and 1,000 hook-task records (read and written every iteration).

Drives the real engine in-process with the real command agent, real git and real files.
"""

from __future__ import annotations

import os
import statistics
import sys

from _project import make_project
from ralphloop.agents.command import CommandAgent
from ralphloop.cancel import CancelToken
from ralphloop.engine.loop import Loop, LoopConfig
from ralphloop.events import IterationFinished
from ralphloop.guards.breaker import BreakerConfig
from ralphloop.hooks.spec import CommandSpec
from ralphloop.paths import ralph_home, resolve_feature
from ralphloop.process import ProcessLimits
from ralphloop.prompt import default_template
from ralphloop.protocols import SystemClock
from ralphloop.state.calls import CallLedger, ledger_path
from ralphloop.tasks.goal import GoalSource
from ralphloop.tasks.goal_steps import GoalProgress, HookTask, Step

ITERATIONS = 30
QUIET_BREAKER = BreakerConfig(
    no_progress_threshold=1000, half_open_after=1000, failure_threshold=1000, same_error_threshold=1000
)
AGENT = (
    "import json, os, re, sys; p = sys.stdin.read(); n = os.environ['RALPH_ITERATION']; "
    "m = re.search(r'^Work on (step-\\d+)', p, re.M); "
    "print('```json'); print(json.dumps({'status': 'continue', 'completedStepIds': [m.group(1)] if m else [], "
    "'pendingSteps': [{'id': None, 'prompt': 'step from iteration ' + n}]})); print('```')"
)
HOOKS = (
    "per-iteration-hooks:\n"
    "  - {id: seq, command: 'true', parallel: false}\n"
    "  - {id: bg, command: 'echo $ITERATION > /dev/null', parallel: true}\n"
)


def measure(label: str, *, hooks: bool = False, big: bool = False) -> None:
    root, env = make_project()
    os.environ.update(env)
    os.chdir(root)
    folder = os.path.join(root, ".ralph", "goal")
    os.makedirs(folder)
    with open(os.path.join(folder, "SPRINT.yaml"), "w", encoding="utf-8") as handle:
        handle.write("workflow: ralph\ngoal: |\n  Benchmark the loop.\n" + (HOOKS if hooks else ""))
    paths = resolve_feature(root, "goal")
    source = GoalSource(paths.dir, "goal", root)
    if big:
        now = "2026-11-21T00:00:00Z"
        steps = tuple(Step(f"step-{n}", f"step {n} " * 10, "completed", now, n, now) for n in range(500))
        tasks = tuple(HookTask(n // 2, f"hook-{n % 2}", "completed", now, now, 0) for n in range(1000))
        source.save(GoalProgress("bench", "Benchmark the loop.\n", steps=steps, hook_tasks=tasks))
    finished: list[IterationFinished] = []
    config = LoopConfig(
        ITERATIONS,
        ProcessLimits(60.0),
        16 * 1024,
        1000,
        default_template("goal"),
        archive=False,
        breaker=QUIET_BREAKER,
        gates=(CommandSpec("gate", "true"),) if hooks else (),
    )
    loop = Loop(
        paths=paths,
        source=source,
        agent=CommandAgent(f"{sys.executable} -c {AGENT!r}"),
        config=config,
        clock=SystemClock(),
        sink=lambda event: finished.append(event) if isinstance(event, IterationFinished) else None,
        cancel=CancelToken(),
        ledger=CallLedger(ledger_path(ralph_home(), "bench")),
        goal=source,
    )
    outcome = loop.run()
    overhead = sorted(item.overhead_s * 1000 for item in finished)
    size = os.path.getsize(source.progress_file)
    print(f"{len(finished)} goal iterations ({outcome.reason.value}) {label}; PROGRESS.yaml {size / 1024:.0f} KB:")
    print(
        f"  ralph overhead per iteration: median {statistics.median(overhead):.1f} ms, "
        f"p90 {overhead[int(0.9 * len(overhead))]:.1f} ms, max {overhead[-1]:.1f} ms"
    )


def main() -> None:
    measure("in a fresh workspace")
    measure("with a sequential hook, a background hook and a quality gate", hooks=True)
    measure("over 500 steps and 1,000 hook records", big=True)


if __name__ == "__main__":
    main()
