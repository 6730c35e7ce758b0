"""`ralph analyze FILE`: the loop's own analysis of a saved output, from its logs or from a real CLI capture."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ANALYZE_JSON_KEYS, RalphRunner, agent_cmd, read_json
from tests.integration.helpers import ESC, assert_one_line_error

FIXTURES = Path(__file__).parent.parent / "fixtures"
CLAUDE_STREAM = FIXTURES / "claude" / "claude_mock_ok_streamjson.jsonl"
CODEX_JSON = FIXTURES / "captures" / "codex_mock_ok_json.jsonl"
CLAUDE_JSON = FIXTURES / "captures" / "claude_mock_tool_json.json"
GEMINI_STREAM = FIXTURES / "gemini" / "mock_tool_streamjson" / "stdout"
PROMISE = "<promise>COMPLETE</promise>"
TEMPLATE = f"Work on {{{{task_id}}}}.\n\n{PROMISE}\n\nis what you print when every story passes.\n"
FIELDS = ANALYZE_JSON_KEYS
NOT_ANALYSIS = ("file", "format", "prompt")


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("plan_agent.py", str(path))


def analyze_json(ralph: RalphRunner, *args: str) -> dict[str, Any]:
    done = ralph("analyze", *args, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    body = json.loads(done.stdout)
    assert isinstance(body, dict)
    return body


@pytest.fixture
def loop_logs(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> Path:
    """Two real iterations: the first echoes its prompt and signals DONE and LEARN; the second signals FAIL
    and writes the promise to stderr only. Returns the logs folder."""
    template = project / "template.md"
    template.write_text(TEMPLATE)
    plan = {
        "1": {
            "echo_prompt": True,
            "signals": [["done", "S-1"], ["learn", "iteration one lesson"]],
            "say": "<ralph>LEARN: tag lesson</ralph>\n",
        },
        "2": {"signals": [["fail", "S-1", "still broken"]], "say": "working\n", "say_err": PROMISE + "\n"},
    }
    done = ralph("run", "-n", "2", "-p", str(template), "--agent-cmd", plan_agent(tmp_path, plan))
    assert done.returncode == 1, done.stdout + done.stderr
    return feature / "logs"


def test_analyze_a_loop_log_uses_its_prompt_and_records(loop_logs: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    log = loop_logs / "iteration-1.log"
    assert PROMISE in log.read_text()  # the echo, with the template's promise in plain text

    first = analyze_json(ralph, str(log))

    for key in FIELDS:
        assert key in first, key
    assert first["format"] == "text"
    assert first["prompt"] is not None
    assert os.path.samefile(first["prompt"], loop_logs / "iteration-1.prompt.md")
    assert first["echo_removed"] is True
    assert first["completion_claimed"] is False
    assert first["done_ids"] == ["S-1"]
    assert first["failed"] == []  # iteration 2's record is not this iteration's
    assert first["learnings"] == ["tag lesson", "iteration one lesson"]
    assert "signal_file" in first["signals"]

    # Without the prompt beside it the echo is the agent's own text, and its promise a claim.
    empty = tmp_path / "empty.md"
    empty.write_text("")
    unprompted = analyze_json(ralph, str(log), "--prompt", str(empty))
    assert unprompted["echo_removed"] is False
    assert unprompted["completion_claimed"] is True
    assert unprompted["done_ids"] == ["S-1"]  # the records still come from the log's feature
    # A copy outside the feature's logs is just a saved output: no prompt, no records.
    copy = tmp_path / "iteration-1.log"
    shutil.copyfile(log, copy)
    alone = analyze_json(ralph, str(copy))
    assert alone["prompt"] is None
    assert alone["completion_claimed"] is True
    assert alone["done_ids"] == []
    assert "signal_file" not in alone["signals"]


def test_analyze_agrees_with_the_loop(loop_logs: Path, feature: Path, ralph: RalphRunner) -> None:
    log = loop_logs / "iteration-2.log"
    assert f"[stderr] {PROMISE}" in log.read_text()  # on stderr, which the loop never reads for signals

    second = analyze_json(ralph, str(log))

    assert second["failed"] == [{"id": "S-1", "reason": "still broken"}]
    assert second["done_ids"] == []
    assert second["learnings"] == []
    assert second["completion_claimed"] is False
    loop = read_json(feature / ".response_analysis")
    assert loop["iteration"] == 2
    fields = {key: value for key, value in second.items() if key not in NOT_ANALYSIS}
    assert fields == {key: loop[key] for key in fields}


def test_human_report_of_a_loop_log(loop_logs: Path, ralph: RalphRunner) -> None:
    done = ralph("analyze", str(loop_logs / "iteration-1.log"))

    assert done.returncode == 0, done.stderr
    report = done.stdout
    assert "an echo of the prompt removed" in report
    assert "2 `ralph signal` record(s)" in report
    assert "Completion claimed: no" in report
    assert "DONE: S-1" in report
    assert "Learning: tag lesson" in report
    assert "Learning: iteration one lesson" in report
    assert "signal_file" in report


def made_claude_json(tmp_path: Path) -> Path:
    path = tmp_path / "claude.json"
    path.write_text(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": PROMISE}))
    return path


def made_text(tmp_path: Path) -> Path:
    path = tmp_path / "reply.txt"
    path.write_text(f"Finished.\n{PROMISE}\n")
    return path


FORMAT_CASES = [
    # (file, --format, the format reported, completion claimed)
    ("stream", "auto", "claude-stream-json", True),
    ("stream", "claude-stream-json", "claude-stream-json", True),
    ("stream", "codex-json", "codex-json", False),
    ("codex", "auto", "codex-json", True),
    ("codex", "codex-json", "codex-json", True),
    ("codex", "claude-stream-json", "claude-stream-json", False),
    ("gemini", "auto", "gemini-stream-json", True),
    ("gemini", "gemini-stream-json", "gemini-stream-json", True),
    ("gemini", "claude-stream-json", "claude-stream-json", False),
    ("stream", "gemini-stream-json", "gemini-stream-json", False),
    ("claude-json", "auto", "claude-json", False),
    ("made-claude-json", "auto", "claude-json", True),
    ("made-claude-json", "claude-json", "claude-json", True),
    ("made-claude-json", "codex-json", "codex-json", False),
    ("text", "auto", "text", True),
    ("text", "text", "text", True),
    ("text", "claude-json", "claude-json", False),
]


@pytest.mark.parametrize(("name", "fmt", "reported", "claimed"), FORMAT_CASES)
def test_format_choices(
    project: Path, ralph: RalphRunner, tmp_path: Path, name: str, fmt: str, reported: str, claimed: bool
) -> None:
    files = {
        "stream": lambda: CLAUDE_STREAM,
        "codex": lambda: CODEX_JSON,
        "gemini": lambda: GEMINI_STREAM,
        "claude-json": lambda: CLAUDE_JSON,
        "made-claude-json": lambda: made_claude_json(tmp_path),
        "text": lambda: made_text(tmp_path),
    }
    path = files[name]()
    args = (str(path),) if fmt == "auto" else (str(path), "--format", fmt)

    body = analyze_json(ralph, *args)

    assert body["format"] == reported
    assert body["completion_claimed"] is claimed
    assert body["claim_sources"] == (["promise"] if claimed else [])


def test_claude_json_capture_reads_the_result_text(project: Path, ralph: RalphRunner) -> None:
    """The capture's `result` is "ok"; read as plain text its JSON would show nothing of the kind."""
    done = ralph("analyze", str(CLAUDE_JSON))

    assert done.returncode == 0, done.stderr
    assert "(claude-json)" in done.stdout.splitlines()[0]
    assert "Completion claimed: no" in done.stdout
    assert "Signals seen: none" in done.stdout


def test_missing_file_is_one_line(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    missing = tmp_path / "nothing.log"

    assert_one_line_error(ralph("analyze", str(missing)), "ralph: error:", str(missing), "no such file")


def test_folder_is_one_line(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    assert_one_line_error(ralph("analyze", str(tmp_path)), "ralph: error:", "is a folder")


def test_unreadable_file_is_one_line(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a file whatever its mode")
    path = made_text(tmp_path)
    path.chmod(0)
    try:
        assert_one_line_error(ralph("analyze", str(path)), "ralph: error:", "cannot read")
    finally:
        path.chmod(0o644)


def test_missing_explicit_prompt_is_one_line(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    missing = tmp_path / "prompt.md"

    done = ralph("analyze", str(made_text(tmp_path)), "--prompt", str(missing))

    assert_one_line_error(done, "ralph: error:", "--prompt", str(missing))


def test_unknown_format_is_one_line(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    assert_one_line_error(ralph("analyze", str(made_text(tmp_path)), "--format", "gemini"), "ralph: error:")


HOSTILE = (
    "\x1b[31mI hit a wall\x1b[0m\n"
    "<ralph>LEARN: \x1b]0;pwned\x07use the \x1b[1mfixtures\x1b[0m</ralph>\n"
    "<ralph>FAIL S-1: \x1b[2Jscreen cleared</ralph>\n"
    "<ralph>DONE S-1\x1b[0m</ralph>\n"
    "Should I \x1b[5mreally\x1b[0m continue?\n\n"
    "---RALPH_STATUS---\n"
    "STATUS: BLOCKED\n"
    "WORK_TYPE: \x1b[33mIMPLEMENTATION\n"
    "RECOMMENDATION: \x1b[41mcall ops\x1b[0m \x9b31mnow\x1b\n"
    "---END_RALPH_STATUS---\n\n"
    "```json\n"
    + json.dumps(
        {
            "status": "needs-human",
            "summary": "\x1b[31msummary",
            "humanNeeded": {"reason": "\x1b]8;;http://x\x07link", "details": "d\x1bXe\x1b\\"},
        }
    )
    + "\n```\n"
)


def test_report_never_prints_escape_sequences(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    path = tmp_path / "hostile.log"
    path.write_text(HOSTILE)

    done = ralph("analyze", str(path))

    assert done.returncode == 0, done.stderr
    report = done.stdout
    assert ESC not in report, report
    assert "\x9b" not in report, report
    assert "\x07" not in report, report
    # The fields were shown, only cleaned: the test read what it meant to.
    for shown in ("Learning: use the fixtures", "FAIL S-1: screen cleared", "Recommendation: call ops", "summary"):
        assert shown in report, (shown, report)
    assert "Blocked:" in report
    assert "Needs a human:" in report
    assert "Question to the user:" in report


def test_report_never_prints_escape_sequences_from_the_file_name(
    project: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    path = tmp_path / "out\x1b[31mred.log"
    path.write_text("working\n")

    done = ralph("analyze", str(path))

    assert done.returncode == 0, done.stderr
    assert ESC not in done.stdout


def test_analyze_counts_only_the_records_that_name_the_iteration(
    feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    """Documented (docs/analysis.md): the loop counts an unnumbered record by when it was appended; a saved
    log cannot tell that afterwards, so `ralph analyze` counts only the records that name the iteration."""
    plan = {"*": {"signals": [["learn", "unnumbered lesson"]], "unnumbered": True, "say": "hi\n"}}
    done = ralph("run", "-n", "1", "--agent-cmd", plan_agent(tmp_path, plan))
    assert done.returncode == 1, done.stdout + done.stderr
    assert read_json(feature / ".response_analysis")["learnings"] == ["unnumbered lesson"]  # the loop counted it

    body = analyze_json(ralph, str(feature / "logs" / "iteration-1.log"))

    assert body["learnings"] == []
