"""The guards' own cost per iteration (seed 000: rate-limit check < 50 ms, circuit breaker check < 100 ms).

Times the real per-account ledger (`CallLedger.take`: flock, read, prune, atomic write with fsync)
with a full window of 100 starts, and one breaker update plus its state-file write.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ralphloop.guards.breaker import Breaker, BreakerConfig, IterationFacts
from ralphloop.state.calls import CallLedger, ledger_path
from ralphloop.state.circuit import append_history, save_breaker

ROUNDS = 200


def _report(label: str, samples: list[float], target: str) -> None:
    ordered = sorted(samples)
    print(
        f"{label}: median {statistics.median(ordered):.2f} ms, p90 {ordered[int(0.9 * len(ordered))]:.2f} ms, "
        f"max {ordered[-1]:.2f} ms ({target})"
    )


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="ralph-bench-guards-"))
    ledger = CallLedger(ledger_path(str(folder), "bench"))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    samples = []
    for index in range(ROUNDS):
        moment = start + timedelta(seconds=36 * index)  # 100 starts an hour: the window stays full
        began = time.perf_counter()
        ledger.take(moment, 100)
        samples.append((time.perf_counter() - began) * 1000)
    _report("rate-limit slot (CallLedger.take, 100 in the window)", samples, "seed target < 50 ms")

    breaker, config = Breaker(), BreakerConfig()
    state, history = str(folder / ".circuit_breaker_state"), str(folder / ".circuit_breaker_history")
    samples = []
    for index in range(ROUNDS):
        facts = IterationFacts(iteration=index, progress=index % 3 != 0, failed=False)
        began = time.perf_counter()
        breaker, transition = breaker.after(facts, config, start)
        save_breaker(state, breaker, index)
        if transition:
            append_history(history, [transition])
        samples.append((time.perf_counter() - began) * 1000)
    _report("circuit breaker update + state file", samples, "seed target < 100 ms")


if __name__ == "__main__":
    main()
