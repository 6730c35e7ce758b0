"""`ralph run --agent amp` through the real CLI, with tests/agents/replay_amp.py as `amp.command`: it replays Amp
0.0.1790142911 runs (tests/fixtures/amp/: failures captured from the real CLI, threads built from its source) byte
for byte and records the arguments ralph passed. tests/e2e/test_amp_cli.py drives the installed real CLI."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.conftest import RalphRunner, read_json
from tests.integration import replays


class Replay(replays.Replay):
    CLI = "amp"


def run(ralph: RalphRunner, *args: str) -> subprocess.CompletedProcess[str]:
    return ralph("run", "-f", "feat", "--agent", "amp", "--on-usage-limit", "exit", *args)


def test_amp_runs_execute_mode_with_the_prompt_on_stdin_and_records_tokens_and_mode(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work:built_tool_complete"])
    replay.configure(project)
    done = ralph("run", "-f", "feat", "--agent", "amp", "--no-archive", "--model", "medium")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    assert len(calls) == 3  # one per story
    assert calls[0]["args"] == ["-x", "--stream-json", "--no-ide", "--mode", "medium"]
    assert all(call["stdin_bytes"] > 500 for call in calls)  # the whole prompt, on stdin
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("amp", "complete")
    first = replays.metrics(feature)[0]
    assert first["agent"] == "amp" and first["model"] == "medium"  # Amp's mode: the stream names no model
    assert first["usage"]["input_tokens"] == 1265 and first["usage"]["output_tokens"] == 155
    assert first["usage"]["cache_creation_tokens"] == 3350 and first["usage"]["cache_read_tokens"] == 8600
    assert first["cost_usd"] is None  # credits, not dollars, and not in the stream
    assert (project / "work-S-1.txt").read_text() == "done S-1\n"


def test_all_is_passed_only_when_asked_and_ask_is_refused(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work:built_tool_complete"])
    replay.configure(project)
    assert run(ralph, "-n", "1").returncode in (0, 1)
    assert "--dangerously-allow-all" not in replay.calls()[0]["args"]
    assert run(ralph, "-n", "1", "--permissions", "all").returncode in (0, 1)
    assert replay.calls()[1]["args"][-1] == "--dangerously-allow-all"
    prd = (feature / "prd.json").read_text()
    refused = ralph("run", "-f", "feat", "--agent", "amp", "--permissions", "ask")
    said = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Amp cannot run with permissions: ask" in said
    assert "Traceback" not in said and len(replay.calls()) == 2
    assert (feature / "prd.json").read_text() == prd


def test_a_failed_thread_exits_0_yet_stops_the_run_with_the_fix(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["built_result_out_of_credits"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ampcode.com/pay" in done.stdout + done.stderr
    assert len(replay.calls()) == 1
    assert read_json(feature / "status.json")["exitReason"] == "agent_error"


def test_the_free_tier_limit_stops_with_the_next_hour_as_its_reset(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["built_result_free_limit"])
    replay.configure(project)
    before = datetime.now(UTC)
    done = run(ralph)
    after = datetime.now(UTC)
    assert done.returncode == 2, done.stdout + done.stderr
    limit = read_json(feature / "status.json")["usageLimit"]
    hours = {
        (moment.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for moment in (before, after)
    }
    assert limit["vendor"] == "amp" and limit["resetsAt"] in hours


def test_the_real_clis_401_stops_at_once(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    replay = Replay(tmp_path, ["auth_401"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1
    assert "amp login" in done.stdout + done.stderr
    assert len(replay.calls()) == 1


def test_an_amp_command_that_is_not_there_is_a_one_line_error(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replays.use(project, "amp", tmp_path / "no-such-amp")
    done = run(ralph)
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "amp.command" in said and "Traceback" not in said


def test_ralph_analyze_reads_an_amp_log(ralph: RalphRunner, tmp_path: Path) -> None:
    log = tmp_path / "iteration-2.log"
    log.write_bytes((replays.FIXTURES / "amp" / "built_tool_complete" / "stdout").read_bytes())
    for args in (["--agent", "amp"], []):
        done = ralph("analyze", *args, "--json", str(log))
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        assert body["format"] == "amp-stream-json" and body["completion_claimed"] is True


def test_ralph_validate_refuses_what_a_run_refuses_amp_with_permissions_ask(
    project: Path, feature: Path, ralph: RalphRunner
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "agents: [amp, claude]\npermissions: ask\n")
    checked = ralph("validate", "-f", "feat")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert "(permissions): Amp cannot run with permissions: ask" in checked.stdout + checked.stderr
