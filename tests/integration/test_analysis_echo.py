"""An agent that echoes its prompt (all of it, or one instruction line) makes no claim by doing so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries

PROMISE = "<promise>COMPLETE</promise>"
INSTRUCTION = f"When all stories pass, output {PROMISE} at the end."
# Every signal written plainly (no backticks, no fence): only the echo logic can tell it is not the agent's.
TEMPLATE = f"""# Echo test

Work on story {{{{task_id}}}} of {{{{feature}}}}.
{INSTRUCTION}

End every reply with a status block like this one:

---RALPH_STATUS---
STATUS: COMPLETE
TASKS_COMPLETED_THIS_LOOP: 1
FILES_MODIFIED: 1
TESTS_STATUS: PASSING
WORK_TYPE: IMPLEMENTATION
EXIT_SIGNAL: true
RECOMMENDATION: nothing left to do
---END_RALPH_STATUS---
"""


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("plan_agent.py", str(path))


def template(project: Path) -> str:
    path = project / "echo-template.md"
    path.write_text(TEMPLATE)
    return str(path)


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
    entries = progress_entries(progress)
    assert [entry_fields(entry)["Status"] for entry in entries] == ["in-progress", "in-progress"]
    assert "refused" not in (feature / "logs" / "iteration-2.prompt.md").read_text().lower()


def test_echo_of_the_whole_prompt_is_not_a_claim(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    cmd = plan_agent(tmp_path, {"*": {"echo_prompt": True}})

    done = ralph("run", "-n", "2", "-p", template(project), "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
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


def test_echo_of_one_instruction_line_is_not_a_claim(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    cmd = plan_agent(tmp_path, {"*": {"echo_line": "When all stories pass"}})

    done = ralph("run", "-n", "2", "-p", template(project), "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    assert (feature / "logs" / "iteration-1.log").read_text() == INSTRUCTION + "\n"
    assert_no_claim_seen(feature)
    analysis = read_json(feature / ".response_analysis")
    assert analysis["echo_removed"] is False  # not a whole echo: the line itself is recognised
    assert analysis["promise"] is False
    assert analysis["quotations_ignored"] >= 1


def test_a_claim_after_an_echo_still_counts(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    """Removing the echo must not remove the agent's own words after it."""
    cmd = plan_agent(tmp_path, {"*": {"echo_prompt": True, "say": f"\nAll done.\n{PROMISE}\n"}})

    done = ralph("run", "-n", "2", "-p", template(project), "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    signals = read_json(feature / ".exit_signals")
    assert [claim["iteration"] for claim in signals["refused_claims"]] == [1, 2]
    analysis = read_json(feature / ".response_analysis")
    assert analysis["echo_removed"] is True
    assert analysis["promise"] is True
    assert analysis["claim_sources"] == ["promise"]


EXAMPLE_BLOCK = TEMPLATE[TEMPLATE.index("---RALPH_STATUS---") :]
COPIES = {
    # (what the agent prints after "My report:", whether it is the agent's own claim)
    "prose-copy": (EXAMPLE_BLOCK, False),
    "fenced-copy": (f"```\n{EXAMPLE_BLOCK}```\n", False),
    "own-block": (EXAMPLE_BLOCK.replace("nothing left to do", "merge it"), True),
}


@pytest.mark.parametrize("case", sorted(COPIES))
def test_a_copy_of_the_prompts_example_block_is_not_a_claim(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, case: str
) -> None:
    block, claims = COPIES[case]
    cmd = plan_agent(tmp_path, {"*": {"say": f"My report:\n\n{block}"}})

    done = ralph("run", "-n", "1", "-p", template(project), "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    analysis = read_json(feature / ".response_analysis")
    assert analysis["echo_removed"] is False
    assert analysis["completion_claimed"] is claims
    refused = read_json(feature / ".exit_signals")["refused_claims"]
    assert [claim["iteration"] for claim in refused] == ([1] if claims else [])
