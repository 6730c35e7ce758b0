"""An agent that does nothing: the loop stops at the iteration limit (in-process; the CLI's spellings of the limit
and its exit code are tests/integration/test_max_iterations.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import Turn, Turns, entries, run

IDLE = Turn(say="nothing to do\n")


@pytest.mark.parametrize(
    "asked",
    [
        {"feature": "feat", "flags": {"max_iterations": ("2", "-n/--max-iterations")}},  # ralph run -f feat -n 2
        {"target": "feat", "flags": {"max_iterations": ("2", "ITERATIONS")}},  # ralph run feat 2
    ],
    ids=["flag", "positional"],
)
def test_stops_after_exactly_the_limit(project: Path, feature: Path, asked: dict[str, Any]) -> None:
    done = run(project, Turns(then=IDLE), **asked)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["iteration"] == 2
    assert status["storiesComplete"] == 0
    logs = feature / "logs"
    assert (logs / "iteration-1.log").is_file()
    assert (logs / "iteration-2.log").is_file()
    assert not (logs / "iteration-3.log").exists()
    assert "nothing to do" in (logs / "iteration-1.log").read_text()
    found = entries(feature)
    assert [entry["Iteration"] for entry in found] == ["1", "2"]
    assert all(entry["Status"] != "complete" for entry in found)
    # The same open story is worked again, not skipped.
    assert [entry["Story"] for entry in found] == ["S-1 - Story 1", "S-1 - Story 1"]


def test_iterations_continue_numbering_across_runs(project: Path, feature: Path) -> None:
    assert run(project, Turns(IDLE), n=1).outcome.reason is ExitReason.MAX_ITERATIONS

    done = run(project, Turns(IDLE), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert (feature / "logs" / "iteration-2.log").is_file()
    assert [entry["Iteration"] for entry in entries(feature)] == ["1", "2"]
