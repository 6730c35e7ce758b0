"""Issue 19's speed numbers in one run, side by side for a baseline git ref and the working tree:
ralph's own time per iteration (small project and 20,000 files), start-up of `ralph run` to the first
agent call, and `ralph status --json`. Each script it draws on has more detail and options.

    .venv/bin/python bench/compare.py [--baseline REF] [--only-current] [--quick]
"""

from __future__ import annotations

import statistics

import loop_overhead
import startup
import status_latency
from _agent import build
from _versions import arguments, table, versions


def main() -> None:
    parser = arguments(__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer iterations and runs (noisier)")
    options = parser.parse_args()
    iterations, rounds, runs = (10, 1, 5) if options.quick else (30, 2, 15)
    found = versions(options.baseline, options.only_current, options.dev_venv)
    agent = build()
    for name in ("small", "20k"):
        mode = loop_overhead.MODES[name]
        times = loop_overhead.measure(mode, found, agent, iterations, rounds)
        rows = [
            (
                v.label,
                [*loop_overhead.summary(times[v.label].gaps), f"CPU {statistics.median(times[v.label].cpu):5.1f} ms"],
            )
            for v in found
        ]
        table(f"ralph's own time per iteration, {mode.title}:", rows, mode.target)
    started = startup.run_startup(found, agent, 0, runs)
    rows = [(v.label, startup.cells(started[v.label][1:])) for v in found]
    table("ralph run: start to the first agent call, small project:", rows, startup.TARGET)
    status = status_latency.measure(found, runs * 2)[status_latency.JSON]
    rows = [(v.label, status_latency.describe(status[v.label])) for v in found]
    table("ralph status --json:", rows, status_latency.TARGET)


if __name__ == "__main__":
    main()
