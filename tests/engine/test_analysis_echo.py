"""An agent that echoes its prompt (all of it, or one instruction line) makes no claim by doing so. In-process: runs
built as `ralph run -p TEMPLATE` builds them, their agents played back (harness.py), the real analysis and records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from ralphloop.core.runner import Launch
from ralphloop.processes.replay import Recording
from tests.conftest import read_json
from tests.engine.harness import Plays, Ran, Turn, Turns, entries, run
from tests.engine.test_analysis_claims import COMPLETE_BLOCK, PROMISE

INSTRUCTION = f"When all stories pass, output {PROMISE} at the end."
# The claims test's status block, as a prompt's example of one. Every signal is written plainly (no backticks, no
# fence): only the echo logic can tell it is not the agent's.
EXAMPLE_BLOCK = COMPLETE_BLOCK[COMPLETE_BLOCK.index("---RALPH_STATUS---") :].replace("ship it", "nothing left to do")
TEMPLATE = f"""# Echo test

Work on story {{{{task_id}}}} of {{{{feature}}}}.
{INSTRUCTION}

End every reply with a status block like this one:

{EXAMPLE_BLOCK}"""


@dataclass(frozen=True)
class EchoLine:
    """tests/agents/plan_agent.py's "echo_line": the one prompt line that holds `text`, printed."""

    text: str

    def recording(self, launch: Launch) -> Recording:
        line = next(line for line in launch.command.stdin.decode().splitlines() if self.text in line)
        return Recording(f"{line}\n".encode())


def run_with_template(project: Path, turn: Plays, n: int) -> Ran:
    """`ralph run -n N -p echo-template.md`, every iteration played by `turn`."""
    path = project / "echo-template.md"
    path.write_text(TEMPLATE)
    return run(project, Turns(then=turn), n=n, prompt=str(path))


def assert_no_claim_seen(feature: Path) -> None:
    """Two iterations ran to the limit, and nothing anywhere took the echo as a claim."""
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations", status
    assert status["iteration"] == 2
    assert status["storiesComplete"] == 0
    assert status["refusedClaim"] is None
    assert status["blockedLoops"] == 0
    signals = read_json(feature / ".exit_signals")
    assert signals["refused_claims"] == []
    assert signals["done_signals"] == []
    progress = (feature / "progress.txt").read_text()
    assert "refused" not in progress.lower(), progress
    assert [entry["Status"] for entry in entries(feature)] == ["in-progress", "in-progress"]
    assert "refused" not in (feature / "logs" / "iteration-2.prompt.md").read_text().lower()


def test_echo_of_the_whole_prompt_is_not_a_claim(project: Path, feature: Path) -> None:
    done = run_with_template(project, Turn(echo_prompt=True), n=2)

    assert done.outcome.reason.exit_code == 1, done.screen
    log = (feature / "logs" / "iteration-1.log").read_text()
    # The echo really happened, with the promise and the status block in plain text.
    assert log == (feature / "logs" / "iteration-1.prompt.md").read_text()
    assert PROMISE in log
    assert "\nEXIT_SIGNAL: true\n" in log
    assert_no_claim_seen(feature)
    analysis = read_json(feature / ".response_analysis")
    assert analysis["iteration"] == 2
    assert analysis["echo_removed"] is True
    assert analysis["completion_claimed"] is False
    assert analysis["promise"] is False
    assert analysis["exit_signal"] is None
    assert analysis["status"] is None


def test_echo_of_one_instruction_line_is_not_a_claim(project: Path, feature: Path) -> None:
    done = run_with_template(project, EchoLine("When all stories pass"), n=2)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert (feature / "logs" / "iteration-1.log").read_text() == INSTRUCTION + "\n"
    assert_no_claim_seen(feature)
    analysis = read_json(feature / ".response_analysis")
    assert analysis["echo_removed"] is False  # not a whole echo: the line itself is recognised
    assert analysis["promise"] is False
    assert analysis["quotations_ignored"] >= 1


def test_a_claim_after_an_echo_still_counts(project: Path, feature: Path) -> None:
    """Removing the echo must not remove the agent's own words after it."""
    done = run_with_template(project, Turn(echo_prompt=True, say=f"\nAll done.\n{PROMISE}\n"), n=2)

    assert done.outcome.reason.exit_code == 1, done.screen
    signals = read_json(feature / ".exit_signals")
    assert [claim["iteration"] for claim in signals["refused_claims"]] == [1, 2]
    analysis = read_json(feature / ".response_analysis")
    assert analysis["echo_removed"] is True
    assert analysis["promise"] is True
    assert analysis["claim_sources"] == ["promise"]


COPIES = {
    # (what the agent prints after "My report:", whether it is the agent's own claim)
    "prose-copy": (EXAMPLE_BLOCK, False),
    "fenced-copy": (f"```\n{EXAMPLE_BLOCK}```\n", False),
    "own-block": (EXAMPLE_BLOCK.replace("nothing left to do", "merge it"), True),
}


@pytest.mark.parametrize("case", sorted(COPIES))
def test_a_copy_of_the_prompts_example_block_is_not_a_claim(project: Path, feature: Path, case: str) -> None:
    block, claims = COPIES[case]

    done = run_with_template(project, Turn(say=f"My report:\n\n{block}"), n=1)

    assert done.outcome.reason.exit_code == 1, done.screen
    analysis = read_json(feature / ".response_analysis")
    assert analysis["echo_removed"] is False
    assert analysis["completion_claimed"] is claims
    refused = read_json(feature / ".exit_signals")["refused_claims"]
    assert [claim["iteration"] for claim in refused] == ([1] if claims else [])
