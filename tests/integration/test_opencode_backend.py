"""`ralph run --agent opencode` at the CLI's edge, with tests/agents/replay_opencode.py as `opencode.command`: it
replays real opencode 1.18.33 runs (tests/fixtures/opencode/) byte for byte and records what ralph passed.

What the backend passes, reads and decides (permissions, usage limits, a bad model) is
tests/engine/test_opencode_backend.py's, in-process. Here: one run end to end through a real process (the folder it
works in), the idle timeout that ends a real process waiting in silence, a model without a provider's error, and
`ralph analyze` of a log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, read_json
from tests.integration import replays


class Replay(replays.Replay):
    CLI = "opencode"


def run(ralph: RalphRunner, *args: str, cwd: Path | None = None) -> Any:
    return ralph("run", "-f", "feat", "--agent", "opencode", "--on-usage-limit", "exit", *args, cwd=cwd)


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def test_opencode_gets_the_prompt_on_stdin_in_the_project(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    elsewhere = project / ".ralph"  # ralph started from a subfolder: opencode must still work in the project
    done = run(ralph, "--no-archive", "--model", "fake/fake-coder", cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    assert calls[0]["args"] == [
        "run", "--format", "json", "--print-logs", "--log-level", "ERROR",
        "--title", "ralph S-1 iteration 1", "-m", "fake/fake-coder",
    ]  # fmt: skip
    assert all(call["pwd"] == str(project) and call["cwd"] == str(project) for call in calls)
    assert all("S-1" in call["stdin"] and len(call["stdin"]) > 500 for call in calls[:1])
    assert json.loads(calls[0]["permission"]) == {"edit": {"*": "allow"}, "bash": {"*": "deny"}}
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("opencode", "complete")
    assert metrics(feature)[0]["agent"] == "opencode"  # its tokens and cost: tests/engine/test_opencode_backend.py


def test_opencode_waiting_in_silence_is_ended_by_its_idle_timeout(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    # The capture of opencode waiting out a two-hour retry-after, replayed: its output, then silence.
    replay = Replay(tmp_path, ["mock_usage_limit_waiting_json"])
    replay.configure(project)
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + 'process:\n  idle_timeout_minutes: "1s"\n')
    done = run(ralph, "-n", "1")
    assert done.returncode == 2, done.stdout + done.stderr  # the usage limit it waited out: --on-usage-limit exit
    progress = (feature / "progress.txt").read_text()
    assert "no output for 1 s (the idle timeout)" in progress
    assert "opencode was retrying: AI_APICallError: You have reached your usage limit" in progress
    assert read_json(feature / "status.json")["exitReason"] == "usage_limit"


def test_a_model_without_a_provider_is_a_one_line_error(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    before = (feature / "prd.json").read_text()
    done = run(ralph, "--model", "sonnet")
    assert done.returncode != 0
    assert "--model: opencode names a model provider/model" in done.stderr
    assert "Traceback" not in done.stderr and not replay.calls_file.exists()
    assert (feature / "prd.json").read_text() == before


def test_ralph_analyze_reads_an_opencode_log(ralph: RalphRunner, tmp_path: Path) -> None:
    log = tmp_path / "iteration-3.log"
    log.write_bytes((Path(__file__).parent.parent / "fixtures" / "opencode" / "mock_tool_json" / "stdout").read_bytes())
    for args in (["--agent", "opencode"], []):
        done = ralph("analyze", *args, "--json", str(log))
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        assert body["format"] == "opencode-json" and body["completion_claimed"] is True
