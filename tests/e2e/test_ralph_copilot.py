"""`ralph run --agent copilot` end to end: the real GitHub Copilot CLI (pinned 1.0.102, installed from npm by the
tests) in its bring-your-own-key mode against the loopback fake of the OpenAI Chat Completions API
(tests/e2e/fake_openai_chat.py).

Copilot needs no GitHub login with a custom provider: `COPILOT_PROVIDER_BASE_URL` names the fake,
`COPILOT_PROVIDER_API_KEY` a fake key, and `COPILOT_OFFLINE=true` keeps it off every other network (GitHub
authentication, telemetry, updates). The fake answers with scripted tool calls, so the real CLI really edits the
repository under ralph's default permissions (`--allow-tool write`), really refuses a shell command they do not
allow, and ralph reads the real JSON events it prints and the usage file it writes. Nothing here mocks ralph or
the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.e2e.copilot_cli import copilot_cache_home, copilot_executable
from tests.e2e.fake_openai_chat import FAKE_API_KEY, FakeOpenAIChat, HttpError, Message, Request, Usage, tool_call

MODEL = "gpt-4.1"  # a model Copilot knows: it offers its `create`, `edit` and `bash` tools

pytestmark = pytest.mark.timeout(900)  # the first test may pay for the npm install


@pytest.fixture(scope="session")
def copilot_bin() -> str:
    """The real `copilot` of the pinned version (installed once into the test cache, its bundle unpacked)."""
    return copilot_executable()


@pytest.fixture
def chat_api() -> Iterator[FakeOpenAIChat]:
    """A started fake Chat Completions API with an empty script; add turns with `chat_api.add_turns(...)`."""
    with FakeOpenAIChat() as fake:
        yield fake


@pytest.fixture
def env(tmp_path: Path, chat_api: FakeOpenAIChat) -> dict[str, str]:
    return copilot_env(tmp_path, chat_api)


def copilot_env(tmp_path: Path, chat_api: FakeOpenAIChat) -> dict[str, str]:
    """Copilot's environment over ralph's test one: a private HOME, the shared unpacked bundle, the fake as its
    custom provider, offline; the machine's own Copilot and GitHub variables blanked (the runner merges this
    over the inherited environment, so a variable can only be emptied, not removed)."""
    home = tmp_path / "copilot-home"
    home.mkdir()
    blanked = {key: "" for key in os.environ if key.startswith(("COPILOT_", "GH_", "GITHUB_"))}
    return {
        **blanked,
        "HOME": str(home),
        "COPILOT_CACHE_HOME": str(copilot_cache_home()),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": chat_api.url,
        "COPILOT_PROVIDER_API_KEY": FAKE_API_KEY,
    }


def use_copilot(project: Path, copilot_bin: str) -> None:
    """Config: the installed CLI as copilot.command, no backoff waits, no usage-limit margin."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text().replace("  margin_seconds: 60 ", "  margin_seconds: 0 ")
        + f"\ncopilot:\n  command: {json.dumps(copilot_bin)}\n"
        + "\nbackoff:\n  initial_seconds: 0\n"
    )


def mark_all_stories(prd: Path) -> Any:
    """A turn making Copilot's `edit` tool set every story's `passes` in prd.json, read when the CLI asks."""

    def turn(request: Request) -> Any:
        text = prd.read_text()
        return tool_call(
            "edit", {"path": str(prd), "old_str": text, "new_str": text.replace('"passes": false', '"passes": true')}
        )

    return turn


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def run(ralph: RalphRunner, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return ralph(
        "run", "-f", "feat", "--no-archive", "--agent", "copilot", "--model", MODEL, *args, env=env, timeout=300
    )


def test_tool_calls_edit_the_repository_a_shell_command_is_refused_and_the_completion_has_its_usage(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, copilot_bin: str
) -> None:
    use_copilot(project, copilot_bin)
    chat_api.add_turns(
        tool_call("create", {"path": str(project / "work.txt"), "file_text": "done\n"}, usage=Usage(3000, 40, 2000)),
        tool_call("bash", {"command": "touch shell.txt", "description": "Touch a file"}),
        mark_all_stories(feature / "prd.json"),
        Message("All stories pass. <promise>COMPLETE</promise>", Usage(4000, 60, 3500, reasoning_tokens=20)),
    )
    done = run(ralph, env)
    assert done.returncode == 0, done.stdout + done.stderr

    # The real CLI wrote the file and edited prd.json with its own tools; the shell command was refused.
    assert (project / "work.txt").read_text() == "done\n"
    assert all(story["passes"] for story in read_json(feature / "prd.json")["userStories"])
    assert not (project / "shell.txt").exists()
    requests = chat_api.main_requests
    assert len(requests) == 4 and chat_api.pending == 0
    assert requests[0].headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    assert "S-1" in json.dumps(requests[0].messages)  # ralph's prompt reached the API (through stdin)
    assert "Permission denied" in json.dumps(requests[2].tool_results)  # what the model was told about `touch`

    [line] = metrics(feature)
    # what the fake sent, summed by Copilot in its usage file: 3000+100+100+4000 in, of which 2000+3500 cached
    assert line["usage"]["input_tokens"] == 7200 - 5500
    assert line["usage"]["cache_read_tokens"] == 5500
    assert line["usage"]["output_tokens"] == 40 + 20 + 20 + 60
    assert line["model"] == MODEL and line["agent"] == "copilot"
    assert line["cost_usd"] is None  # a custom provider's calls: GitHub reports no charge, ralph guesses none
    assert (line["outcome"], line["success"], line["exit_code"]) == ("complete", True, 0)
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"], status["model"]) == ("copilot", "complete", MODEL)
    log = (feature / "logs" / "iteration-1.log").read_text()
    assert '"type":"tool.execution_start"' in log and '"code":"denied"' in log


def test_a_weekly_rate_limit_exits_2_with_its_reset_as_an_instant(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, copilot_bin: str
) -> None:
    use_copilot(project, copilot_bin)
    body = HttpError.error_body(
        "You have exceeded your weekly rate limit. Please try again in 2 hours.",
        "rate_limit",
        "user_weekly_rate_limited",
    )
    chat_api.add_turns(HttpError(429, body, {"retry-after": "7200"}))
    before = datetime.now(UTC).replace(microsecond=0)
    done = run(ralph, env, "--on-usage-limit", "exit")
    after = datetime.now(UTC)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(chat_api.main_requests) == 1  # a wait that long is not retried by Copilot
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_limit")
    limit = status["usageLimit"]
    assert (limit["vendor"], limit["kind"], limit["policy"]) == ("copilot", "weekly", "exit")
    resets = datetime.strptime(limit["resetsAt"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before + timedelta(hours=2) <= resets <= after + timedelta(hours=2)
    assert "try again in 2 hours" in limit["message"]
    assert [line["outcome"] for line in metrics(feature)] == ["usage-limit"]


def test_a_spent_quota_with_its_reset_exits_2_at_that_instant(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, copilot_bin: str
) -> None:
    use_copilot(project, copilot_bin)
    reset = (datetime.now(UTC) + timedelta(days=3)).replace(hour=0, minute=0, second=0, microsecond=0)
    said = f"You have used all your AI credits. Your limit resets at {reset:%Y-%m-%dT%H:%M:%SZ}."
    chat_api.add_turns(HttpError(402, HttpError.error_body(said, "quota", "quota_exceeded")))
    done = run(ralph, env, "--on-usage-limit", "exit")
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(chat_api.main_requests) == 1
    limit = read_json(feature / "status.json")["usageLimit"]
    assert (limit["vendor"], limit["kind"]) == ("copilot", "monthly")
    assert limit["resetsAt"] == f"{reset:%Y-%m-%dT%H:%M:%SZ}"


def test_a_short_rate_limit_is_retried_after_a_backoff_and_the_run_goes_on(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, copilot_bin: str
) -> None:
    use_copilot(project, copilot_bin)
    chat_api.add_turns(
        HttpError.rate_limited(retry_after=3600),  # longer than Copilot waits: it gives up at once
        mark_all_stories(feature / "prd.json"),
        Message("Done. <promise>COMPLETE</promise>"),
    )
    done = run(ralph, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(chat_api.main_requests) == 3
    # the 429 is the service's failure, not the task's: not counted, retried after the backoff
    assert [(line["outcome"], line["counted"]) for line in metrics(feature)] == [
        ("api-error", False),
        ("complete", True),
    ]
    assert "rate-limited the request (a short rate limit, not the usage limit)" in done.stdout + done.stderr
