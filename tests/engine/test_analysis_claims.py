"""Completion claims, in-process: a false claim is refused and told, no claim is needed, trust takes it. Runs built
as `ralph run` builds them, their agents played back (harness.py); the CLI's side is
tests/integration/test_analysis_claims.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import ALL, Turn, Turns, entries, run
from tests.integration.helpers import set_config

PROMISE = "<promise>COMPLETE</promise>"
COMPLETE_BLOCK = """Everything is implemented.

---RALPH_STATUS---
STATUS: COMPLETE
TASKS_COMPLETED_THIS_LOOP: 1
FILES_MODIFIED: 1
TESTS_STATUS: PASSING
WORK_TYPE: IMPLEMENTATION
EXIT_SIGNAL: true
RECOMMENDATION: ship it
---END_RALPH_STATUS---
"""
CLAIMS = {
    "promise": (f"All done.\n{PROMISE}\n", "promise", "promise"),
    "exit_signal": (COMPLETE_BLOCK, "EXIT_SIGNAL: true", "status_block"),
}
REFUSED_2 = "2 task(s) still do not pass: S-2, S-3"
REFUSED_3 = "3 task(s) still do not pass: S-1, S-2, S-3"


def trusting(project: Path) -> None:
    set_config(project, "\ncompletion: verify\n", "\ncompletion: trust\n")


@pytest.mark.parametrize("kind", sorted(CLAIMS))
def test_false_claim_is_refused_recorded_and_told(project: Path, feature: Path, kind: str) -> None:
    reply, _, _ = CLAIMS[kind]
    # Iterations 2-4 change nothing: keep the circuit breaker (3 by default) out of this claim test.
    set_config(project, "no_progress_threshold: 3", "no_progress_threshold: 9")
    # Iteration 1 finishes S-1 and claims everything is done; iteration 2 claims again with no work.
    agent = Turns(Turn(passes=["S-1"], say=reply), Turn(say=reply), then=Turn())

    done = run(project, agent, n=4)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["status"] == "halted"
    assert status["storiesComplete"] == 1
    assert status["refusedClaim"] is None  # the last iteration claimed nothing

    found = entries(feature)
    assert len(found) == 4
    notes = [entry["Note"] for entry in found]
    assert f"completion claim refused: {REFUSED_2}" in notes[0]
    assert f"completion claim refused: {REFUSED_2}" in notes[1]
    assert "refused" not in notes[2] + notes[3]
    # S-1 itself did pass, but both iterations claimed everything: their status says the claim was refused
    assert found[0]["Status"] == "refused"
    assert found[1]["Status"] == "refused"
    assert found[2]["Status"] == "in-progress"

    signals = read_json(feature / ".exit_signals")
    assert isinstance(signals["schema_version"], int)
    assert signals["done_signals"] == [1, 2]
    assert [(claim["iteration"], claim["reason"]) for claim in signals["refused_claims"]] == [
        (1, REFUSED_2),
        (2, REFUSED_2),
    ]

    logs = feature / "logs"
    assert "Note from ralph" not in (logs / "iteration-1.prompt.md").read_text()
    for number in (2, 3):
        prompt = (logs / f"iteration-{number}.prompt.md").read_text()
        assert f"Note from ralph: your last completion claim was refused: {REFUSED_2}." in prompt
    # Iteration 3 made no claim: iteration 4 is not told of an old refusal.
    assert "Note from ralph" not in (logs / "iteration-4.prompt.md").read_text()

    analysis = read_json(feature / ".response_analysis")
    assert analysis["iteration"] == 4
    assert analysis["completion_claimed"] is False
    assert analysis["loop"]["refused_claim"] is None


@pytest.mark.parametrize("kind", sorted(CLAIMS))
def test_claim_sources_are_named(project: Path, feature: Path, kind: str) -> None:
    reply, source, signal = CLAIMS[kind]

    done = run(project, Turns(then=Turn(say=reply)), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    analysis = read_json(feature / ".response_analysis")
    assert analysis["completion_claimed"] is True
    assert analysis["claim_sources"] == [source]
    assert analysis["loop"]["refused_claim"] == REFUSED_3
    assert analysis["loop"]["decision"] == "halt"
    status = read_json(feature / "status.json")
    assert status["refusedClaim"] == REFUSED_3
    assert status["confidence"] == 100
    assert signal in status["lastSignals"]


def test_finishing_without_a_promise_completes_at_once(project: Path, feature: Path) -> None:
    agent = Turns(then=Turn(passes=ALL, write={"feature.txt": "built\n"}, say="I built it.\n"))

    done = run(project, agent, n=5)

    assert done.outcome.reason is ExitReason.COMPLETE
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "complete"
    assert status["exitMessage"] == "every task is done"
    assert status["iteration"] == 1
    assert status["storiesComplete"] == 3
    assert status["refusedClaim"] is None
    assert not (feature / "logs" / "iteration-2.log").exists()
    assert not (feature / "logs" / "iteration-2.prompt.md").exists()
    found = entries(feature)
    assert len(found) == 1
    assert found[0]["Status"] == "complete"
    signals = read_json(feature / ".exit_signals")
    assert signals["done_signals"] == []
    assert signals["refused_claims"] == []
    analysis = read_json(feature / ".response_analysis")
    assert analysis["completion_claimed"] is False
    assert analysis["loop"]["decision"] == "complete"
    assert analysis["loop"]["exit_reason"] == "complete"


TRUST_CASES = {
    "config": ({}, PROMISE + "\n", "promise"),
    "env": ({"RALPH_COMPLETION": "trust"}, PROMISE + "\n", "promise"),
    "env-exit-signal": ({"RALPH_COMPLETION": "trust"}, COMPLETE_BLOCK, "EXIT_SIGNAL: true"),
}


@pytest.mark.parametrize("case", sorted(TRUST_CASES))
def test_trust_takes_a_claim_at_its_word(
    project: Path, feature: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    env, reply, source = TRUST_CASES[case]
    if case == "config":
        trusting(project)
    for key, value in env.items():
        monkeypatch.setenv(key, value)

    done = run(project, Turns(then=Turn(say=reply)), n=5)

    assert done.outcome.reason is ExitReason.COMPLETE
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "complete"
    assert status["status"] == "complete"
    assert status["iteration"] == 1
    assert status["storiesComplete"] == 0
    assert status["refusedClaim"] is None
    message = status["exitMessage"]
    assert "completion: trust" in message, message
    assert source in message, message
    assert "3 task(s) still open" in message, message
    assert "refused" not in (feature / "progress.txt").read_text().lower()
    assert read_json(feature / ".exit_signals")["refused_claims"] == []
    assert read_json(feature / ".exit_signals")["done_signals"] == [1]


def test_trust_without_a_claim_keeps_going(project: Path, feature: Path) -> None:
    trusting(project)

    done = run(project, Turns(then=Turn(say="still working\n")), n=2)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["iteration"] == 2


def test_environment_verify_overrides_a_trusting_config(
    project: Path, feature: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trusting(project)
    monkeypatch.setenv("RALPH_COMPLETION", "verify")

    done = run(project, Turns(then=Turn(say=PROMISE + "\n")), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["refusedClaim"] == REFUSED_3


# Issue 20, item 11: a promise the agent quotes rather than says never ends a trusting loop with stories open.
QUOTED_PROMISES = {
    "indented-code": f"The rule I follow:\n\n    print {PROMISE}\n\nStill on S-2.\n",
    "blockquote": f"The prompt says:\n> when every story passes, print {PROMISE}\n",
    "html-comment": f"Still on S-2.\n<!-- {PROMISE} -->\n",
    "json-string": f'{{"next": "S-2", "note": "end with {PROMISE}"}}\n',
}


@pytest.mark.parametrize("case", sorted(QUOTED_PROMISES))
def test_trust_ignores_a_quoted_promise(project: Path, feature: Path, case: str) -> None:
    trusting(project)

    done = run(project, Turns(then=Turn(say=QUOTED_PROMISES[case])), n=2)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["iteration"] == 2
    assert read_json(feature / ".exit_signals")["done_signals"] == []
