"""Terminal escape sequences in an agent's reply never reach ralph's terminal output or its records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import ESC

# Raw escape sequences in every field the loop shows or records.
RAW = (
    "\x1b[31mI hit a wall\x1b[0m\n"
    "<ralph>LEARN: \x1b]0;pwned\x07use the \x1b[1mfixtures\x1b[0m</ralph>\n"
    "<ralph>FAIL S-1: \x1b[2Jscreen cleared</ralph>\n\n"
    "---RALPH_STATUS---\n"
    "STATUS: BLOCKED\n"
    "RECOMMENDATION: \x1b[41mcall ops\x1b[0m \x9b31mnow\n"
    "---END_RALPH_STATUS---\n"
)
# The same, written the JSON way: the escapes only exist once the ```json result is decoded.
JSON_ESCAPED = (
    "```json\n"
    + json.dumps(
        {
            "status": "needs-human",
            "humanNeeded": {"reason": "\x1b]8;;http://x\x07link\x1b]8;;\x07", "details": "\x1b[2J"},
        }
    )
    + "\n```\n"
)


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("plan_agent.py", str(path))


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return []


def test_raw_escapes_are_stripped_everywhere(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    done = ralph("run", "-n", "1", "--agent-cmd", plan_agent(tmp_path, {"*": {"say": RAW}}))

    assert done.returncode == 1, done.stdout + done.stderr
    assert ESC not in done.stdout + done.stderr
    progress = (feature / "progress.txt").read_text()
    assert ESC not in progress
    assert "\x9b" not in progress
    # The fields arrived, cleaned.
    assert "  - use the fixtures" in progress
    assert "agent signalled FAIL S-1: screen cleared" in progress
    assert "agent reports BLOCKED (1/3 in a row): call ops now" in progress
    for name in ("status.json", ".response_analysis", ".exit_signals"):
        for text in strings(read_json(feature / name)):
            assert ESC not in text and "\x9b" not in text, (name, text)
    status = ralph("status")
    assert status.returncode == 0, status.stderr
    assert ESC not in status.stdout


def test_json_escaped_escapes_are_stripped_too(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    done = ralph("run", "-n", "1", "--agent-cmd", plan_agent(tmp_path, {"*": {"say": JSON_ESCAPED}}))

    assert done.returncode == 1, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "needs_human"
    assert ESC not in done.stdout
    assert ESC not in (feature / "progress.txt").read_text()
