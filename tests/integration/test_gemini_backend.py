"""`ralph run --agent gemini` at the CLI's edge, with tests/agents/replay_gemini.py as `gemini.command`: it
replays real Gemini CLI 0.61.0 runs (tests/fixtures/gemini/) byte for byte and records the arguments ralph passed.

What the backend passes, reads and decides (the approval modes, the quotas, no credentials, a refused tool) is
tests/engine/test_gemini_backend.py's, in-process. Here: one run end to end through a real process, `ralph analyze`
of a log, and a missing command's error line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, read_json
from tests.integration import replays
from tests.integration.helpers import assert_one_line_error

FIXTURES = Path(__file__).parent.parent / "fixtures" / "gemini"


class Replay(replays.Replay):
    CLI = "gemini"


def run(ralph: RalphRunner, *args: str) -> Any:
    return ralph("run", "-f", "feat", "--agent", "gemini", "--on-usage-limit", "exit", *args)


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def test_gemini_runs_stream_json_with_the_prompt_on_stdin(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "--no-archive", "--model", "gemini-2.5-pro")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    assert len(calls) == 3  # one story each
    assert calls[0]["args"] == [
        "-p", "", "--output-format", "stream-json", "--skip-trust",
        "-m", "gemini-2.5-pro", "--approval-mode", "auto_edit",
    ]  # fmt: skip
    assert all(call["stdin_bytes"] > 500 for call in calls)  # the whole prompt, on stdin only
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("gemini", "complete")
    assert metrics(feature)[0]["agent"] == "gemini"  # its tokens and cost: tests/engine/test_gemini_backend.py


def test_ralph_analyze_reads_a_gemini_log(ralph: RalphRunner, tmp_path: Path) -> None:
    log = tmp_path / "iteration-3.log"
    log.write_bytes((FIXTURES / "mock_tool_streamjson" / "stdout").read_bytes() + b"[stderr] Ripgrep missing\n")
    done = ralph("analyze", "--agent", "gemini", "--json", str(log))
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["format"] == "gemini-stream-json" and body["completion_claimed"] is True
    detected = json.loads(ralph("analyze", "--json", str(log)).stdout)
    assert detected["format"] == "gemini-stream-json"


def test_a_missing_gemini_command_is_a_one_line_error(project: Path, feature: Path, ralph: RalphRunner) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\ngemini:\n  command: /nonexistent/gemini\n")
    before = (feature / "prd.json").read_bytes()
    done = run(ralph)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert_one_line_error(done, "ralph: error:", "gemini.command", "'/nonexistent/gemini' is not an executable")
    assert (feature / "prd.json").read_bytes() == before
