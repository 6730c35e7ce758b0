"""ralph's own time per iteration (wall time minus the agent's): target median < 100 ms over 30
iterations of an instant agent (aim 30 ms); and the same for iterations whose failed attempt is
saved (git ref + patch) and undone before the retry.

Drives the real engine in-process with the real command agent, real git and real records
(the rate-limit ledger included), and reads each iteration's wall and agent times from the
engine's events.
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
from ralphloop.paths import ralph_home, resolve_feature
from ralphloop.process import ProcessLimits
from ralphloop.prompt import default_template
from ralphloop.protocols import SystemClock
from ralphloop.state.calls import CallLedger, ledger_path
from ralphloop.tasks.prd_json import PrdSource

ITERATIONS = 30
# The agent changes nothing, so the breaker would open after 3: keep it out of the measurement.
QUIET_BREAKER = BreakerConfig(
    no_progress_threshold=1000, half_open_after=1000, failure_threshold=1000, same_error_threshold=1000
)
FAILING_SCRIPT = "import os; open('attempt.txt', 'a').write(os.environ['RALPH_ITERATION']); raise SystemExit(1)"
FAILING_AGENT = f'{sys.executable} -c "{FAILING_SCRIPT}"'


def measure(agent_command: str, label: str) -> None:
    root, env = make_project()
    os.environ.update(env)
    os.chdir(root)
    paths = resolve_feature(root, "feat")
    finished: list[IterationFinished] = []

    def sink(event: object) -> None:
        if isinstance(event, IterationFinished):
            finished.append(event)

    config = LoopConfig(
        ITERATIONS,
        ProcessLimits(60.0),
        16 * 1024,
        1000,
        default_template(),
        archive=False,
        breaker=QUIET_BREAKER,
        max_retries=ITERATIONS + 1,
    )
    loop = Loop(
        paths=paths,
        source=PrdSource(paths.prd),
        agent=CommandAgent(agent_command),
        config=config,
        clock=SystemClock(),
        sink=sink,
        cancel=CancelToken(),
        ledger=CallLedger(ledger_path(ralph_home(), "bench")),
    )
    outcome = loop.run()
    overhead = sorted(item.overhead_s * 1000 for item in finished)
    agent = [item.result.duration_s * 1000 for item in finished]
    print(f"{len(finished)} iterations ({outcome.reason.value}) of {label}:")
    print(
        f"  ralph overhead per iteration: median {statistics.median(overhead):.1f} ms, "
        f"p90 {overhead[int(0.9 * len(overhead))]:.1f} ms, max {overhead[-1]:.1f} ms (target: median < 100 ms, aim 30)"
    )
    print(f"  agent process (spawn to exit): median {statistics.median(agent):.1f} ms")


def main() -> None:
    measure("true", "an instant agent (`true`)")
    measure(FAILING_AGENT, "a failing agent whose attempt is saved and undone each time")


if __name__ == "__main__":
    main()
