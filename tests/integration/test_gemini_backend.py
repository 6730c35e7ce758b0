"""`ralph run --agent gemini` through the real CLI, with tests/agents/replay_gemini.py as `gemini.command`: it
replays real Gemini CLI 0.61.0 runs (tests/fixtures/gemini/) byte for byte and records the arguments ralph passed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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


def test_gemini_runs_stream_json_with_the_prompt_on_stdin_and_reports_tokens_and_cost(
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
    first = metrics(feature)[0]
    assert first["model"] == "gemini-2.5-pro" and first["agent"] == "gemini"
    # e2e_tool_write: prompts 7000 of which 5500 cached; output 100 candidates + 32 thinking tokens.
    assert first["usage"]["input_tokens"] == 1500 and first["usage"]["cache_read_tokens"] == 5500
    assert first["usage"]["output_tokens"] == 132
    assert first["cost_usd"] == round((1500 * 1.25 + 5500 * 0.125 + 132 * 10.0) / 1e6, 6)


@pytest.mark.parametrize(
    ("flags", "mode"),
    [(("--permissions", "ask"), "default"), (("--dangerously-skip-permissions",), "yolo")],
)
def test_permissions_pick_the_approval_mode(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, flags: tuple[str, ...], mode: str
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "-n", "1", *flags)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    args = replay.calls()[0]["args"]
    assert args[args.index("--approval-mode") + 1] == mode and args.count("--approval-mode") == 1
    assert "--yolo" not in args and "-m" not in args


def test_a_quota_with_a_long_retry_stops_the_run_with_its_reset(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["e2e_quota_retry_long"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 2, done.stdout + done.stderr
    limit = read_json(feature / "status.json")["usageLimit"]
    assert limit["vendor"] == "gemini" and limit["resetsAt"] == "2026-11-27T15:44:01Z" and limit["policy"] == "exit"
    assert [line["outcome"] for line in metrics(feature)] == ["usage-limit"]


def test_the_daily_quota_stops_the_run_without_a_reset(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["mock_quota_429_daily_streamjson"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 2, done.stdout + done.stderr
    limit = read_json(feature / "status.json")["usageLimit"]
    assert (limit["vendor"], limit["kind"], limit["resetsAt"]) == ("gemini", "daily", None)


def test_no_credentials_stop_at_once(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    replay = Replay(tmp_path, ["streamjson_noauth"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1
    assert "GEMINI_API_KEY" in done.stdout + done.stderr
    assert len(replay.calls()) == 1


def test_a_refused_tool_twice_in_a_row_opens_the_breaker(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["e2e_shell_denied"])
    replay.configure(project)
    done = run(ralph, "-n", "4")
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(replay.calls()) == 2
    assert "run_shell_command(echo hi > x.txt)" in done.stdout + done.stderr, done.stdout + done.stderr
    assert "permission denied in 2 iterations in a row" in done.stdout + done.stderr


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
