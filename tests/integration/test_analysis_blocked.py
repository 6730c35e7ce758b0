"""BLOCKED reports (status block or `ralph signal blocked`) and a needs-human JSON result halt the loop."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import PYTHON, RalphRunner, agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries

REASON = "Need the staging database password from ops"
BLOCKED = f"""I cannot reach the database.

---RALPH_STATUS---
STATUS: BLOCKED
TASKS_COMPLETED_THIS_LOOP: 0
FILES_MODIFIED: 0
TESTS_STATUS: NOT_RUN
WORK_TYPE: IMPLEMENTATION
EXIT_SIGNAL: false
RECOMMENDATION: {REASON}
---END_RALPH_STATUS---
"""
# Work that moves a task (S-1 passes): progress, so the breaker stays out of the blocked-count tests.
WORKING = {"say": "Added the parser.\n", "write": {"parser.txt": "parser\n"}, "pass": ["S-1"]}


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("plan_agent.py", str(path))


def set_threshold(project: Path, threshold: int) -> None:
    config = project / ".ralph" / "config.yaml"
    text = config.read_text()
    assert "\nblocked_threshold: 3\n" in text, text
    config.write_text(text.replace("\nblocked_threshold: 3\n", f"\nblocked_threshold: {threshold}\n"))


def notes(feature: Path) -> list[str]:
    return [entry_fields(entry)["Note"] for entry in progress_entries((feature / "progress.txt").read_text())]


def test_three_blocked_reports_in_a_row_halt(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    done = ralph("run", "-n", "10", "--agent-cmd", plan_agent(tmp_path, {"*": {"say": BLOCKED}}))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "blocked"
    assert status["status"] == "halted"
    assert status["blockedReason"] == REASON
    assert status["blockedLoops"] == 3
    assert status["iteration"] == 3
    assert "3 times in a row" in status["exitMessage"]
    assert REASON in status["exitMessage"]
    assert not (feature / "logs" / "iteration-4.log").exists()
    entries = progress_entries((feature / "progress.txt").read_text())
    assert [entry_fields(entry)["Status"] for entry in entries] == ["blocked"] * 3
    for number, note in enumerate(notes(feature), start=1):
        assert f"agent reports BLOCKED ({number}/3 in a row): {REASON}" in note
    assert read_json(feature / ".exit_signals")["blocked_loops"] == [1, 2, 3]
    assert f"you reported BLOCKED last iteration ({REASON})" in (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert "Stopped (blocked)" in done.stdout


def test_blocked_threshold_from_config(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    set_threshold(project, 2)

    done = ralph("run", "-n", "10", "--agent-cmd", plan_agent(tmp_path, {"*": {"say": BLOCKED}}))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "blocked"
    assert status["blockedLoops"] == 2
    assert status["iteration"] == 2
    assert "ralph stops after 2 BLOCKED reports" in (feature / "logs" / "iteration-2.prompt.md").read_text()


def test_blocked_count_is_consecutive(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    set_threshold(project, 2)
    cmd = plan_agent(tmp_path, {"1": {"say": BLOCKED}, "2": WORKING, "3": {"say": BLOCKED}, "4": {"say": BLOCKED}})

    done = ralph("run", "-n", "6", "--agent-cmd", cmd)

    # Blocked, working, blocked: two reports but not in a row, so only the fourth iteration halts.
    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "blocked"
    assert status["iteration"] == 4
    assert status["blockedLoops"] == 2
    found = notes(feature)
    assert "BLOCKED (1/2 in a row)" in found[0]
    assert "BLOCKED" not in found[1]
    assert "BLOCKED (1/2 in a row)" in found[2]
    assert "BLOCKED (2/2 in a row)" in found[3]
    assert read_json(feature / ".exit_signals")["blocked_loops"] == [1, 3, 4]


def test_ralph_signal_blocked_from_the_agent_halts(
    feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    where = tmp_path / "which.txt"
    reason = "the vendor API returns 403 for every key"
    cmd = plan_agent(tmp_path, {"*": {"which": str(where), "signals": [["blocked", reason]], "say": "stopping\n"}})
    # A PATH without this ralph's folder: the loop must put its own `ralph` first for the agent.
    bin_dir = os.path.dirname(PYTHON)
    path = os.pathsep.join(part for part in ralph_env["PATH"].split(os.pathsep) if part and part != bin_dir)

    done = ralph("run", "-n", "10", "--agent-cmd", cmd, env={"PATH": path})

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "blocked"
    assert status["blockedReason"] == reason
    assert status["blockedLoops"] == 3
    assert reason in status["exitMessage"]
    resolved = where.read_text().splitlines()
    assert len(resolved) == 3
    for found in resolved:
        assert found and os.path.samefile(found, os.path.join(bin_dir, "ralph")), resolved
    records = [json.loads(line) for line in (feature / "signals.jsonl").read_text().splitlines()]
    assert [(record["iteration"], record["signal"], record["text"]) for record in records] == [
        (n, "blocked", reason) for n in (1, 2, 3)
    ]
    assert "signal_file" in status["lastSignals"]


def test_needs_human_json_result_halts_at_once(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    result = {
        "status": "needs-human",
        "summary": "stuck on credentials",
        "humanNeeded": {"reason": "The staging API key is missing", "details": "set STAGING_KEY in .env"},
    }
    reply = f"I need help.\n\n```json\n{json.dumps(result, indent=2)}\n```\n"

    done = ralph("run", "-n", "5", "--agent-cmd", plan_agent(tmp_path, {"*": {"say": reply}}))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "needs_human"
    assert status["status"] == "halted"
    assert status["iteration"] == 1
    expected = "The staging API key is missing (set STAGING_KEY in .env)"
    assert expected in status["exitMessage"]
    assert f"agent needs a human: {expected}" in notes(feature)[0]
    analysis = read_json(feature / ".response_analysis")
    assert analysis["json_status"] == "needs-human"
    assert analysis["human_needed"] == result["humanNeeded"]
    assert analysis["loop"]["exit_reason"] == "needs_human"
    assert not (feature / "logs" / "iteration-2.log").exists()


def test_needs_human_in_a_quoted_block_is_not_a_result(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    """Only a ```json fence is the result; the same object in another fence is a quotation."""
    body = json.dumps({"status": "needs-human", "humanNeeded": {"reason": "x"}})
    reply = f"The schema looks like this:\n\n```yaml\n{body}\n```\n"

    done = ralph("run", "-n", "2", "--agent-cmd", plan_agent(tmp_path, {"*": {"say": reply}}))

    assert done.returncode == 1, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
