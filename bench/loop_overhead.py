"""ralph's own time per iteration (wall time minus the agent's): target median < 100 ms over 30
iterations of an instant agent (aim 30 ms).

Drives the real engine in-process with the real command agent (`true`), real git and real
records, and reads each iteration's wall and agent times from the engine's events.
"""

from __future__ import annotations

import os
import statistics

from _project import make_project
from ralphloop.agents.command import CommandAgent
from ralphloop.cancel import CancelToken
from ralphloop.engine.loop import Loop, LoopConfig
from ralphloop.events import IterationFinished
from ralphloop.paths import resolve_feature
from ralphloop.process import ProcessLimits
from ralphloop.prompt import default_template
from ralphloop.protocols import SystemClock
from ralphloop.tasks.prd_json import PrdSource

ITERATIONS = 30


def main() -> None:
    root, env = make_project()
    os.environ.update(env)
    os.chdir(root)
    paths = resolve_feature(root, "feat")
    finished: list[IterationFinished] = []

    def sink(event: object) -> None:
        if isinstance(event, IterationFinished):
            finished.append(event)

    loop = Loop(
        paths=paths,
        source=PrdSource(paths.prd),
        agent=CommandAgent("true"),
        config=LoopConfig(ITERATIONS, ProcessLimits(60.0), 16 * 1024, 100, default_template(), archive=False),
        clock=SystemClock(),
        sink=sink,
        cancel=CancelToken(),
    )
    outcome = loop.run()
    overhead = sorted(item.overhead_s * 1000 for item in finished)
    agent = [item.result.duration_s * 1000 for item in finished]
    print(f"{len(finished)} iterations ({outcome.reason.value}) of an instant agent (`true`):")
    print(
        f"  ralph overhead per iteration: median {statistics.median(overhead):.1f} ms, "
        f"p90 {overhead[int(0.9 * len(overhead))]:.1f} ms, max {overhead[-1]:.1f} ms (target: median < 100 ms, aim 30)"
    )
    print(f"  agent process (spawn to exit): median {statistics.median(agent):.1f} ms")


if __name__ == "__main__":
    main()
