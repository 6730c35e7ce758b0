"""`usage_limit.policy: ask` in-process: a run built as `ralph run` builds it on a terminal, its question at a usage
limit put to the test where the CLI asks on the terminal (harness.run with `ask`), its answer decided by the
engine: "wait" waits for the reset, "exit" stops with code 2, none takes `usage_limit.on_no_answer`.

Seed 003: "Prompt user: wait or exit"; "No response in 30s → Auto-exit". The clock is a fake one; a wait for the
reset is seen (status.json while it lasts), then stopped as Ctrl+C stops it (the run's cancel token). The terminal's
side (the question on a pty, an answer typed, Enter alone, "no answer", the command to run later, pasted, a bad
setting's error line) is tests/integration/test_usage_ask.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ralphloop.core.cancel import CancelToken
from ralphloop.core.events import Waiting
from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import Turn, Turns, run
from tests.integration.helpers import set_config

# tests/agents/limit_once.py: the first call hits the usage limit, every later one finishes a story (story_agent.py)
LIMITED = Turn(say="Claude AI usage limit reached|1893456000\n", exit=1)  # resets 2030-01-01T00:00:00Z
WORKER = Turn(write={"work-{task}.txt": "done {task}\n"}, passes=["{task}"], commit="feat: {task}", say="finished\n")


def usage(project: Path, key: str, value: str) -> None:
    """`usage_limit.KEY: VALUE` in the config `ralph init` wrote (which sets the seed's values)."""
    set_config(project, f"  {key}: {'30' if key == 'ask_timeout_seconds' else 'exit'} ", f"  {key}: {value} ")


def stopped_at_the_reset_wait(feature: Path, cancel: CancelToken, seen: list[dict[str, Any]]) -> Any:
    """A sink that reads status.json as the wait for the reset begins, then stops the run (a Ctrl+C)."""

    def at_the_wait(event: object) -> None:
        if isinstance(event, Waiting) and event.kind == "usage limit" and event.first:
            seen.append(read_json(feature / "status.json"))
            cancel.set()

    return at_the_wait


def test_on_no_answer_wait_waits_for_the_reset_when_nobody_answers(project: Path, feature: Path) -> None:
    usage(project, "ask_timeout_seconds", "0")
    usage(project, "on_no_answer", "wait")
    asked: list[tuple[str, float]] = []
    cancel, waiting = CancelToken(), list[dict[str, Any]]()

    def nobody(question: str, timeout: float) -> str | None:
        asked.append((question, timeout))
        return None

    agent = Turns(LIMITED, then=WORKER)
    sink = stopped_at_the_reset_wait(feature, cancel, waiting)
    done = run(project, agent, ask=nobody, n=3, sinks=[sink], cancel=cancel)

    assert done.outcome.reason is ExitReason.INTERRUPTED and done.outcome.reason.exit_code == 130
    [(question, timeout)] = asked
    assert "Wait or exit? (waiting in 0s unless told)" in question and timeout == 0
    [status] = waiting  # the run waited out the usage limit
    assert status["waiting"]["kind"] == "usage limit"
    assert status["usageLimit"]["policy"] == "wait"
    assert len(agent.launches) == 1  # nothing ran while it waited


def test_an_answer_beats_the_default(project: Path, feature: Path) -> None:
    asking: list[dict[str, Any]] = []
    asked: list[str] = []
    cancel, waiting = CancelToken(), list[dict[str, Any]]()

    def waits(question: str, timeout: float) -> str | None:
        asked.append(question)
        asking.append(read_json(feature / "status.json"))  # while the question waits: the truth, before any answer
        asking[-1]["events"] = (feature / "events.jsonl").read_text()
        return "wait"  # the default is exit: the answer wins

    sink = stopped_at_the_reset_wait(feature, cancel, waiting)
    done = run(project, Turns(LIMITED, then=WORKER), ask=waits, n=3, sinks=[sink], cancel=cancel)

    assert done.outcome.reason is ExitReason.INTERRUPTED and done.outcome.reason.exit_code == 130
    [question] = asked
    assert "(exiting in 30s unless told)" in question
    [status] = asking
    assert status["waiting"]["kind"] == "answer", status
    assert "waiting for your answer" in status["waiting"]["message"]
    assert status["usageLimit"]["resetsAt"] == "2030-01-01T00:00:00Z"  # recorded before asking
    assert "waiting for your answer" in status["events"]
    [status] = waiting  # then it waits out the usage limit, as answered
    assert status["waiting"]["kind"] == "usage limit"
    assert status["usageLimit"]["policy"] == "wait"
