"""`ralph run --agent claude` end to end: the real Claude Code CLI (pinned, installed from npm by the tests)
against the loopback fake of the Anthropic Messages API (tests/e2e/fake_anthropic.py).

The fake answers with scripted tool uses, so the real CLI really edits the repository and commits; ralph
reads the real stream-json it prints. Nothing here mocks ralph or the CLI.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.e2e.conftest import claude_env
from tests.e2e.fake_anthropic import FakeAnthropic, HttpError, Text, Usage, bash, unified_headers, write
from tests.integration.helpers import entry_fields, git, progress_entries

DEFAULT_MODEL = "claude-opus-5-5"  # what 2.1.329 asks for with an API key and no --model


def both_envs(tmp_path: Path, fake: FakeAnthropic, ralph_env: dict[str, str], *, oauth: bool) -> dict[str, str]:
    """ralph's test environment plus the CLI's: the fake's URL, a fake key (or subscription token), a private
    HOME for the CLI. ralph's own variables (RALPH_HOME, the git identity) win."""
    cli = claude_env(tmp_path / "claude-home", fake, oauth=oauth)
    cli.pop("IS_SANDBOX", None)  # a test that wants permissions skipped as root says so
    ours = {key: value for key, value in ralph_env.items() if key.startswith(("RALPH_", "GIT_"))}
    return {**cli, **ours, "PATH": ralph_env["PATH"], "NO_COLOR": "1"}


@pytest.fixture
def env(tmp_path: Path, fake_api: FakeAnthropic, ralph_env: dict[str, str]) -> dict[str, str]:
    return both_envs(tmp_path, fake_api, ralph_env, oauth=False)


@pytest.fixture
def oauth(tmp_path: Path, fake_api: FakeAnthropic, ralph_env: dict[str, str]) -> dict[str, str]:
    """A subscription login (fake OAuth token): the CLI honours the unified rate-limit headers."""
    return both_envs(tmp_path, fake_api, ralph_env, oauth=True)


def use_claude(project: Path, claude_bin: str, extra: str = "") -> None:
    """Config: the installed CLI as claude.command, Bash allowed, no backoff waits, no usage-limit margin."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text().replace("  margin_seconds: 60 ", "  margin_seconds: 0 ")
        + f'\nclaude:\n  command: {json.dumps(claude_bin)}\n  allowed_tools: "Bash,Write,Read"\n{extra}'
        + "\nbackoff:\n  initial_seconds: 0\n"
    )


def finish_story(story: str) -> str:
    """A shell command (run by the CLI's Bash tool) that does story `story`: a file, passes: true, a commit."""
    mark = (
        "import json; p = '.ralph/feat/prd.json'; d = json.load(open(p)); "
        f"[s.update(passes=True) for s in d['userStories'] if s['id'] == {story!r}]; "
        "json.dump(d, open(p, 'w'), indent=2)"
    )
    return (
        f"echo {story} > {story}.txt && python3 -c {shlex.quote(mark)} && git add -A && "
        f"git commit -q -m {shlex.quote('feat: ' + story)} && echo committed {story}"
    )


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def result_event(log: Path) -> dict[str, Any]:
    """The CLI's own `result` event in an iteration log."""
    events = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    [result] = [event for event in events if event.get("type") == "result"]
    return result


def run(ralph: RalphRunner, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return ralph("run", "-f", "feat", "--no-archive", "--agent", "claude", *args, env=env, timeout=300)


def test_stories_done_by_the_real_cli_over_several_iterations_with_metrics(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    use_claude(project, claude_bin)
    for number, story in enumerate(("S-1", "S-2", "S-3"), start=1):
        fake_api.add_turns(
            bash(finish_story(story), text=f"Doing {story}.", usage=Usage(1000 * number, 40, 3000, 500)),
            Text(f"{story} is done. <ralph>DONE {story}</ralph>", Usage(1200 * number, 60, 0, 4000)),
        )
    done = run(ralph, env)
    assert done.returncode == 0, done.stdout + done.stderr

    # The real CLI ran the tools: one commit per story, by the agent, in the project.
    assert git(project, env, "log", "--format=%s", "-3").splitlines() == ["feat: S-3", "feat: S-2", "feat: S-1"]
    assert all((project / f"S-{n}.txt").read_text() == f"S-{n}\n" for n in (1, 2, 3))
    prompts = [request.body["messages"][0] for request in fake_api.main_requests[::2]]
    assert [f"S-{n}" in json.dumps(prompt) for n, prompt in enumerate(prompts, start=1)] == [True] * 3

    lines = metrics(feature)
    assert [line["iteration"] for line in lines] == [1, 2, 3]
    for number, line in enumerate(lines, start=1):
        reported = result_event(feature / "logs" / f"iteration-{number}.log")
        usage = line["usage"]
        assert usage == {
            "input_tokens": reported["usage"]["input_tokens"],
            "output_tokens": reported["usage"]["output_tokens"],
            "cache_creation_tokens": reported["usage"]["cache_creation_input_tokens"],
            "cache_read_tokens": reported["usage"]["cache_read_input_tokens"],
            "total_tokens": reported["usage"]["input_tokens"] + reported["usage"]["output_tokens"],
        }
        # what the fake said, summed over the run's two requests by the CLI itself
        assert (usage["input_tokens"], usage["cache_read_tokens"]) == (2200 * number, 4500)
        assert line["cost_usd"] == reported["total_cost_usd"] and line["cost_usd"] > 0
        assert (line["model"], line["num_turns"], line["stop_reason"]) == (DEFAULT_MODEL, 2, "end_turn")
        assert line["session_id"] == reported["session_id"]
        assert (line["task_id"], line["outcome"], line["success"], line["exit_code"]) == (
            f"S-{number}",
            "complete",
            True,
            0,
        )
        assert line["files_changed"] == 2  # the story's file and prd.json

    status = read_json(feature / "status.json")
    assert status["costUsd"] == pytest.approx(sum(line["cost_usd"] for line in lines))
    assert status["model"] == DEFAULT_MODEL
    for number, line in enumerate(lines, 1):  # each result line carries the iteration's numbers (the block is -v's)
        cost = f"${line['cost_usd']:.2f}" if line["cost_usd"] >= 0.01 else f"${line['cost_usd']:.4f}"
        assert f"✓ S-{number} passes · {number}/3 · 2 files · {cost} · " in done.stdout
        assert "(4.5k cache)" in done.stdout
    assert "--- Iteration Metrics ---" not in done.stdout
    assert "FINAL SUMMARY" in done.stdout and "Completed:       3 / 20" in done.stdout

    report = ralph("report", "-f", "feat", "--json", env=env)
    assert report.returncode == 0, report.stderr
    summary = json.loads(report.stdout)["summary"]
    assert summary["iterations"] == 3
    assert summary["cost_usd"]["total"] == pytest.approx(sum(line["cost_usd"] for line in lines), abs=1e-6)


def test_usage_limit_exit_policy_exits_2_with_the_reset_time(
    project: Path, feature: Path, ralph: RalphRunner, oauth: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    use_claude(project, claude_bin)
    reset = (int(time.time()) // 3600 + 3) * 3600
    fake_api.add_turns(HttpError(429, "rate_limit_error", "limit", unified_headers("rejected", reset)))
    done = run(ralph, oauth, "--on-usage-limit", "exit")
    assert done.returncode == 2, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_limit")
    limit = status["usageLimit"]
    assert limit["resetsAt"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset))
    assert "5-hour limit" in limit["message"] and limit["policy"] == "exit"
    assert [line["outcome"] for line in metrics(feature)] == ["usage-limit"]
    # how to go on once it resets: the same command, flags and all
    assert "Then run: ralph run --no-archive --agent claude --on-usage-limit exit -f feat" in done.stdout


def test_usage_limit_wait_policy_waits_for_the_reset_then_goes_on(
    project: Path, feature: Path, ralph: RalphRunner, oauth: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    use_claude(project, claude_bin)
    reset = int(time.time())  # already reset by the time ralph reads it: the wait is the margin, 0 here
    fake_api.add_turns(
        HttpError(429, "rate_limit_error", "limit", unified_headers("rejected", reset)),
        bash(finish_story("S-1")),
        Text("S-1 done."),
    )
    done = run(ralph, oauth, "--on-usage-limit", "wait", "-n", "1")
    assert done.returncode == 1, done.stdout + done.stderr  # one counted iteration; two stories remain
    assert [entry["Status"] for entry in entries(feature)] == ["usage-limit", "complete"]
    assert "not counted as an iteration" in entries(feature)[0]["Note"]
    assert read_json(feature / "status.json")["storiesComplete"] == 1


def test_overloaded_is_retried_and_the_work_then_done(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    use_claude(project, claude_bin)
    fake_api.add_turns(HttpError.overloaded(), bash(finish_story("S-1")), Text("S-1 done."))
    done = run(ralph, env, "-n", "1")
    assert done.returncode == 1, done.stdout + done.stderr  # max_iterations: the 529 was not counted
    logged = entries(feature)
    assert [entry["Status"] for entry in logged] == ["api-error", "complete"]
    assert "529" in logged[0]["Note"] and "retrying in 0s (attempt 1/10)" in logged[0]["Note"]
    assert [line["outcome"] for line in metrics(feature)] == ["api-error", "complete"]
    assert (project / "S-1.txt").exists()


def test_an_invalid_key_stops_at_once_with_the_fix(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    use_claude(project, claude_bin)
    fake_api.default = HttpError.authentication()
    done = run(ralph, env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(fake_api.main_requests) == 1  # no retry, no second iteration
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("failed", "agent_error")
    assert "Claude Code cannot authenticate (Invalid API key" in status["exitMessage"]
    assert "ANTHROPIC_API_KEY" in status["exitMessage"]
    assert "cannot authenticate" in done.stdout


def test_max_turns_reached_is_a_failed_attempt_saved_and_undone(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    use_claude(project, claude_bin, "  max_turns: 2\n")
    fake_api.add_turns(
        bash("echo half > half-done.txt && echo started"),
        bash(finish_story("S-1")),  # turn 2 of 2: the CLI stops after the tool, S-1 marked passing but unfinished
        bash(finish_story("S-1")),  # the retry: the same work, then its reply
        Text("S-1 done."),
    )
    done = run(ralph, env, "-n", "2", "-s", "S-1")
    assert done.returncode == 0, done.stdout + done.stderr  # -s S-1: done once S-1 passes
    progress = (feature / "progress.txt").read_text()
    assert "[FAIL] S-1 - Claude Code ran out of turns (claude.max_turns: 2): Reached maximum number of turns (2)" in (
        progress
    )
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "complete"]
    # The unfinished attempt was saved, then undone before the retry (its story mark with it).
    assert not (project / "half-done.txt").exists()
    saved = git(project, env, "show", "refs/ralph/attempts/feat/iteration-1:half-done.txt")
    assert saved == "half\n"
    assert [request.body.get("model") for request in fake_api.main_requests][:1] == [DEFAULT_MODEL]


def test_model_and_allowed_tools_reach_the_real_cli(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    """--model reaches the API request; under `permissions: ask` a tool outside claude.allowed_tools is denied by
    the CLI itself (under the default `edits`, Claude Code's acceptEdits mode would let `touch` run)."""
    use_claude(project, claude_bin)
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text().replace('allowed_tools: "Bash,Write,Read"', 'allowed_tools: "Read"'))
    fake_api.add_turns(bash("touch forbidden.txt"), Text("Could not run it."))
    done = run(ralph, env, "-n", "1", "--model", "claude-sonnet-4-5-20250929", "--permissions", "ask")
    assert done.returncode == 1, done.stdout + done.stderr
    assert fake_api.main_requests[0].body["model"] == "claude-sonnet-4-5-20250929"
    assert not (project / "forbidden.txt").exists()
    [line] = metrics(feature)
    assert line["model"] == "claude-sonnet-4-5-20250929"


def test_permissions_edits_lets_the_cli_write_files_without_an_allowed_tools_list(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    """The default `permissions: edits` is Claude Code's acceptEdits: its Write tool runs with no allowed_tools."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"\nclaude:\n  command: {json.dumps(claude_bin)}\n")
    fake_api.add_turns(write(str(project / "notes.txt"), "written\n"), Text("Wrote it."))
    done = run(ralph, env, "-n", "1")
    assert done.returncode == 1, done.stdout + done.stderr  # max_iterations, the stories still open
    assert (project / "notes.txt").read_text() == "written\n"


def test_skip_permissions_when_asked_lets_the_cli_run_any_tool(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    """No allowed_tools at all: only --dangerously-skip-permissions lets Bash run (IS_SANDBOX=1 because the
    suite may run as root, where Claude Code refuses the flag otherwise)."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"\nclaude:\n  command: {json.dumps(claude_bin)}\n")
    fake_api.add_turns(bash(finish_story("S-1")), Text("S-1 done."))
    done = run(ralph, {**env, "IS_SANDBOX": "1"}, "-n", "1", "--dangerously-skip-permissions")
    assert done.returncode == 1, done.stdout + done.stderr  # max_iterations with two stories left
    assert (project / "S-1.txt").exists()
    assert read_json(feature / "status.json")["storiesComplete"] == 1
