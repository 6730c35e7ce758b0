"""`ralph run --agent aider` through the real CLI, with tests/agents/replay_aider.py as `aider.command`: it replays
real aider 0.86.2 runs (tests/fixtures/aider/) byte for byte and records what ralph passed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, read_json
from tests.integration import replays

FIXTURES = Path(__file__).parent.parent / "fixtures" / "aider"
# Written out, not imported: a flag dropped from the backend must fail here (docs/agents.md says why each is there).
FLAGS = [
    "--yes-always",  # an unanswered question is a yes to aider, "Run shell command?" included; this makes it a no
    "--no-pretty",
    "--no-fancy-input",
    "--no-check-update",  # else --yes-always accepts an upgrade
    "--no-show-release-notes",
    "--no-analytics",  # else --yes-always opts the user in
    "--no-detect-urls",
    "--no-suggest-shell-commands",
    "--no-auto-commits",
    "--no-dirty-commits",
    "--no-gitignore",
]


class Replay(replays.Replay):
    CLI = "aider"


def run(ralph: RalphRunner, *args: str) -> Any:
    return ralph("run", "-f", "feat", "--agent", "aider", "--on-usage-limit", "exit", *args)


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def test_aider_reads_the_prompt_from_its_file_and_the_run_records_its_model_tokens_and_cost(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["work"])
    replay.configure(project)
    done = run(ralph, "--no-archive", "--model", "openai/gpt-4o")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = replay.calls()
    assert len(calls) == 3  # one story per iteration
    for number, call in enumerate(calls, start=1):
        prompt = str(feature / "logs" / f"iteration-{number}.prompt.md")
        assert call["args"] == ["--message-file", prompt, *FLAGS, "--model", "openai/gpt-4o"]
        # The prompt is on disk, never in argv; nothing on stdin; no browser opened for aider's URLs.
        assert call["prompt_bytes"] > 500 and call["stdin_bytes"] == 0 and call["browser"] == "true"
        assert all(len(arg) < 200 for arg in call["args"])
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"], status["model"]) == ("aider", "complete", "openai/gpt-4o")
    # aider's own files in the repository's top (history, repo-map cache) are kept out of git, .gitignore untouched
    assert "/.aider*" in (project / ".git" / "info" / "exclude").read_text().splitlines()
    assert "--no-gitignore" in calls[0]["args"] and not (project / ".gitignore").exists()
    first = metrics(feature)[0]
    assert first["agent"] == "aider" and first["model"] == "openai/gpt-4o"
    # "Tokens: 2.4k sent, 11 received. Cost: $0.0061 message, $0.0061 session."
    assert first["usage"]["input_tokens"] == 2400 and first["usage"]["output_tokens"] == 11
    assert first["cost_usd"] == 0.0061


def test_ask_is_a_dry_run_and_all_adds_nothing_aider_could_use(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["mock_ok"])
    replay.configure(project)
    for flag in ("--permissions=ask", "--permissions=edits", "--dangerously-skip-permissions"):
        done = run(ralph, "-n", "1", flag)
        assert done.returncode in (0, 1), done.stdout + done.stderr
    ask, edits, everything = (call["args"][2:] for call in replay.calls())  # after --message-file PATH
    assert ask == [*edits, "--dry-run"]
    assert everything == edits and "--yes-always" in edits  # aider never runs a shell command unasked
    assert not any("yolo" in arg or "skip" in arg or "dangerous" in arg for arg in everything)


def test_a_spent_quota_stops_at_once_though_aider_exits_0(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["mock_insufficient_quota"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no quota or credit left" in done.stdout + done.stderr
    assert "You exceeded your current quota" in done.stdout + done.stderr
    assert len(replay.calls()) == 1
    assert read_json(feature / "status.json")["exitReason"] == "agent_error"


def test_a_wrong_key_stops_at_once(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    replay = Replay(tmp_path, ["mock_auth_401"])
    replay.configure(project)
    done = run(ralph)
    assert done.returncode == 1 and "OPENAI_API_KEY" in done.stdout + done.stderr
    assert len(replay.calls()) == 1


def test_a_rate_limit_is_retried_without_counting_the_iteration(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["mock_rate_limit_429", "mock_server_500", "mock_connection_refused", "work"])
    replay.configure(project)
    done = run(ralph, "-n", "1", "--no-archive")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert len(replay.calls()) == 4  # three transient failures, then the one counted iteration
    assert (project / "work-S-1.txt").exists()
    assert read_json(feature / "prd.json")["userStories"][0]["passes"] is True


def test_a_missing_executable_is_a_one_line_error(project: Path, feature: Path, ralph: RalphRunner) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\naider:\n  command: /nonexistent/aider\n")
    before = (feature / "prd.json").read_bytes()
    done = run(ralph)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "aider.command" in done.stderr and "/nonexistent/aider" in done.stderr
    assert (feature / "prd.json").read_bytes() == before


def test_ralph_analyze_reads_an_aider_log_with_or_without_agent(ralph: RalphRunner, tmp_path: Path) -> None:
    log = tmp_path / "iteration-3.log"
    log.write_bytes((FIXTURES / "mock_ok" / "stdout").read_bytes() + b"[stderr] a warning\n")
    for args in (["--agent", "aider"], []):
        done = ralph("analyze", *args, "--json", str(log))
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        assert body["format"] == "aider-text" and body["completion_claimed"] is True


def test_a_dry_run_shows_the_command_and_where_the_prompt_goes(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    replay = Replay(tmp_path, ["mock_ok"])
    replay.configure(project)
    done = ralph("run", "-f", "feat", "--agent", "aider", "--dry-run", "--permissions", "ask")
    assert done.returncode == 0, done.stderr
    prompt = feature / "logs" / "iteration-1.prompt.md"
    assert f"prompt in {prompt}): {replay.executable} --message-file {prompt} --yes-always" in done.stdout
    assert "--dry-run" in done.stdout and "BROWSER=true" in done.stdout
    assert not replay.calls_file.exists()  # nothing started
