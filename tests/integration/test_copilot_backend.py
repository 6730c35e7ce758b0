"""`ralph run --agent copilot` through the real CLI, with tests/agents/replay_copilot.py as `copilot.command`: it
replays real Copilot CLI 1.0.102 runs (tests/fixtures/copilot/) byte for byte, writes the usage file they wrote,
and records the arguments ralph passed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.integration import replays


class Replay(replays.Replay):
    CLI = "copilot"


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def run(ralph: RalphRunner, *args: str) -> Any:
    return ralph("run", "-f", "feat", "--agent", "copilot", "--on-usage-limit", "exit", *args)


def test_copilot_gets_the_prompt_on_stdin_and_its_usage_file_gives_tokens_and_model(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "--no-archive", "--model", "gpt-4.1")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    usage_file = str(feature / "logs" / "iteration-1.copilot-usage.json")
    assert calls[0]["args"] == [
        "--output-format", "json", "--model", "gpt-4.1", "--allow-tool", "write", "--usage-output-file", usage_file
    ]  # fmt: skip
    assert all(call["stdin_bytes"] > 500 and call["tz"] == "UTC" for call in calls)  # never in argv
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("copilot", "complete")
    first = metrics(feature)[0]
    assert first["model"] == "gpt-4.1" and first["agent"] == "copilot"
    assert first["usage"]["input_tokens"] == 500 and first["usage"]["cache_read_tokens"] == 1000
    assert first["usage"]["output_tokens"] == 25
    assert first["cost_usd"] is None  # a custom provider's run: GitHub charged nothing it reports


def test_refused_tools_in_a_row_open_the_circuit_breaker(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work:mock_tool_json"])  # `rm README.md` refused under --allow-tool write
    replay.configure(project)
    done = run(ralph, "--no-archive")
    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "circuit_open"
    assert "permission denied in 2 iterations in a row: Shell: rm README.md" in done.stdout
    assert [line["usage"]["output_tokens"] for line in metrics(feature)] == [140, 140]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [(("--permissions", "ask"), []), (("--dangerously-skip-permissions",), ["--allow-all-tools"])],
)
def test_permissions_map_to_copilots_tool_approvals(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, flag: tuple[str, ...], expected: list[str]
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "-n", "1", *flag)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    args = replay.calls()[0]["args"]
    allowing = [arg for arg in args if arg.startswith("--allow")]
    assert allowing == expected and "write" not in args and "--yolo" not in args and "--allow-all" not in args


def test_the_weekly_limit_stops_the_run_with_its_reset(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["mock_weekly_limit_429_json"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 2, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    limit = status["usageLimit"]
    assert limit["vendor"] == "copilot" and limit["kind"] == "weekly" and limit["resetsAt"]
    assert "try again in 2 hours" in limit["message"]
    assert [line["outcome"] for line in metrics(feature)] == ["usage-limit"]


def test_no_login_stops_at_once(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    replay = Replay(tmp_path, ["json_noauth"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1
    assert "copilot login" in done.stdout + done.stderr
    assert len(replay.calls()) == 1


def test_ralph_analyze_reads_a_copilot_log(ralph: RalphRunner, tmp_path: Path) -> None:
    log = tmp_path / "iteration-3.log"
    log.write_bytes((Path(__file__).parent.parent / "fixtures" / "copilot" / "mock_tool_json" / "stdout").read_bytes())
    for args in (("--agent", "copilot"), ()):  # named, and detected from the log's events
        done = ralph("analyze", *args, "--json", str(log))
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        assert body["format"] == "copilot-json" and body["completion_claimed"] is True
