"""The real Claude Code CLI against the loopback fake API: tools really run, and errors come out as documented."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import claude_env, run_claude
from tests.e2e.fake_anthropic import (
    FakeAnthropic,
    HttpError,
    Request,
    Text,
    Turn,
    Usage,
    bash,
    unified_headers,
    write,
)

MODEL = "claude-sonnet-4-5-20250929"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Fake Agent",
    "GIT_AUTHOR_EMAIL": "agent@example.invalid",
    "GIT_COMMITTER_NAME": "Fake Agent",
    "GIT_COMMITTER_EMAIL": "agent@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository with one commit, the CLI's working directory."""
    root = tmp_path / "repo"
    root.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), **GIT_IDENTITY}
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    return root


def env_for(tmp_path: Path, fake: FakeAnthropic, **options: Any) -> dict[str, str]:
    return {**claude_env(tmp_path / "home", fake, **options), **GIT_IDENTITY}


def git_log(repo: Path) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def tool_results(request: Request) -> list[dict[str, Any]]:
    """The tool_result blocks of the last user message of a request the CLI sent."""
    content = request.body["messages"][-1]["content"]
    return [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]


def test_bash_tool_commits_in_the_working_directory(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    command = "echo hello > hello.txt && git add hello.txt && git commit -q -m 'add hello' && echo committed"
    fake_api.add_turns(
        bash(command, text="Committing.", usage=Usage(1000, 50, 200, 300)),
        Text("All done.", Usage(1500, 70, 0, 400)),
    )
    run = run_claude(
        claude_bin,
        repo,
        env_for(repo.parent, fake_api),
        "commit a file",
        "--allowedTools",
        "Bash,Write",
        "--model",
        MODEL,
    )

    assert run.returncode == 0, run
    assert (repo / "hello.txt").read_text() == "hello\n"
    assert git_log(repo) == ["add hello", "initial"]
    assert run.of_type("system", "init")[0]["model"] == MODEL
    assert {e["message"]["model"] for e in run.of_type("assistant")} == {MODEL}
    [user] = run.of_type("user")
    assert user["tool_use_result"]["stdout"] == "committed"
    result = run.result
    assert (result["subtype"], result["is_error"], result["result"], result["num_turns"]) == (
        "success",
        False,
        "All done.",
        2,
    )
    usage = result["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (2500, 120)
    assert (usage["cache_creation_input_tokens"], usage["cache_read_input_tokens"]) == (200, 700)
    assert result["total_cost_usd"] > 0
    assert list(result["modelUsage"]) == [MODEL]
    first, second = fake_api.main_requests
    assert first.body["stream"] is True and first.body["model"] == MODEL
    [tool_result] = tool_results(second)
    assert tool_result["is_error"] is False and "committed" in json.dumps(tool_result["content"])
    assert fake_api.pending == 0


def test_write_tool_creates_the_file(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    target = repo / "docs" / "notes.md"
    fake_api.add_turns(write(str(target), "# Notes\nwritten by the fake\n"), Text("Wrote it."))
    run = run_claude(claude_bin, repo, env_for(repo.parent, fake_api), "write notes", "--allowedTools", "Bash,Write")

    assert run.returncode == 0, run
    assert target.read_text() == "# Notes\nwritten by the fake\n"
    assert run.result["is_error"] is False and run.result["result"] == "Wrote it."
    [tool_result] = tool_results(fake_api.main_requests[-1])
    assert tool_result.get("is_error") is not True and "notes.md" in json.dumps(tool_result["content"])


def test_callable_turn_sees_the_tool_result(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    def echo_back(request: Request) -> Text:
        [block] = tool_results(request)
        return Text(f"The tool said: {json.dumps(block['content'])}")

    fake_api.add_turns(bash("echo secret-42"), echo_back)
    run = run_claude(claude_bin, repo, env_for(repo.parent, fake_api), "echo", "--allowedTools", "Bash")

    assert run.returncode == 0, run
    assert run.result["result"] == 'The tool said: "secret-42"'


def test_overloaded_529_fails_fast(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    fake_api.add_turns(HttpError.overloaded())
    run = run_claude(claude_bin, repo, env_for(repo.parent, fake_api), "hello")

    assert run.returncode == 1, run
    assert run.of_type("system", "api_retry") == []
    assert len(fake_api.main_requests) == 1
    [assistant] = run.of_type("assistant")
    assert assistant["message"]["model"] == "<synthetic>" and assistant["is_api_error_message"] is True
    result = run.result
    assert (result["is_error"], result["api_error_status"], result["terminal_reason"]) == (True, 529, "api_error")
    assert result["result"].startswith("API Error: 529 Overloaded")


def test_invalid_key_401_is_authentication_failed(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    fake_api.add_turns(HttpError.authentication())
    run = run_claude(claude_bin, repo, env_for(repo.parent, fake_api), "hello")

    assert run.returncode == 1, run
    [assistant] = run.of_type("assistant")
    assert (assistant["error"], assistant["api_error_status"]) == ("authentication_failed", 401)
    result = run.result
    assert (result["subtype"], result["is_error"], result["api_error_status"]) == ("success", True, 401)
    assert result["result"] == "Invalid API key · Fix external API key"
    assert fake_api.main_requests[0].headers["x-api-key"] == "sk-ant-api03-fake"


def test_unknown_model_404(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    # A 404 on the streaming request makes the CLI try once more without streaming, so script two.
    fake_api.add_turns(*[HttpError.model_not_found("claude-nope-9")] * 2)
    run = run_claude(claude_bin, repo, env_for(repo.parent, fake_api), "hello", "--model", "claude-nope-9")

    assert run.returncode == 1, run
    assert [r.body["stream"] for r in fake_api.main_requests] == [True, False]
    assert run.result["api_error_status"] == 404
    assert run.result["result"].startswith("There's an issue with the selected model (claude-nope-9).")


def next_hour_plus(hours: int) -> int:
    """A reset time on a whole hour, so the CLI's wording ("resets 2am") is predictable."""
    return (int(time.time()) // 3600 + 1 + hours) * 3600


def test_subscription_five_hour_limit(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    reset = next_hour_plus(2)
    fake_api.headers.update(unified_headers("rejected", reset))
    fake_api.add_turns(HttpError(429, "rate_limit_error", "Number of requests has exceeded your rate limit"))
    env = {**env_for(repo.parent, fake_api, oauth=True), "TZ": "UTC"}
    run = run_claude(claude_bin, repo, env, "hello")

    assert run.returncode == 1, run
    assert run.of_type("system", "init")[0]["apiKeySource"] == "none"
    [event] = run.of_type("rate_limit_event")
    info = event["rate_limit_info"]
    assert (info["status"], info["resetsAt"], info["rateLimitType"]) == ("rejected", reset, "five_hour")
    [assistant] = run.of_type("assistant")
    assert (assistant["error"], assistant["api_error"]) == ("rate_limit", "usage_limit_reached")
    result = run.result
    assert (result["is_error"], result["api_error_status"]) == (True, 429)
    clock = datetime.fromtimestamp(reset, UTC).strftime("%I%p").lstrip("0").lower()
    assert result["result"] == f"You've hit your 5-hour limit · resets {clock} (UTC)"
    request = fake_api.main_requests[0]
    assert request.headers["authorization"] == "Bearer sk-ant-oat01-fake" and "x-api-key" not in request.headers


def test_subscription_near_limit_warning(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    reset = next_hour_plus(3)
    fake_api.headers.update(unified_headers("allowed_warning", reset, 0.92))
    fake_api.add_turns(Text("Still going."))
    run = run_claude(claude_bin, repo, env_for(repo.parent, fake_api, oauth=True), "hello")

    assert run.returncode == 0, run
    [event] = run.of_type("rate_limit_event")
    info = event["rate_limit_info"]
    assert (info["status"], info["resetsAt"], info["utilization"]) == ("allowed_warning", reset, 0.92)
    assert run.result["is_error"] is False and run.result["result"] == "Still going."


def test_max_turns_stops_after_the_tool(claude_bin: str, fake_api: FakeAnthropic, repo: Path) -> None:
    fake_api.add_turns(bash("touch ran.txt"), Text("never sent"))
    run = run_claude(
        claude_bin, repo, env_for(repo.parent, fake_api), "go", "--allowedTools", "Bash", "--max-turns", "1"
    )

    assert run.returncode == 1, run
    assert (repo / "ran.txt").exists()
    result = run.result
    assert (result["subtype"], result["is_error"]) == ("error_max_turns", True)
    assert result["errors"] == ["Reached maximum number of turns (1)"]
    assert "result" not in result
    assert fake_api.pending == 1


# The fake on its own, over plain HTTP: what the CLI does not exercise in the runs above.


def post(fake: FakeAnthropic, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(fake.url + path, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_fake_side_requests_do_not_consume_turns() -> None:
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    with FakeAnthropic([Text("scripted", Usage(7, 3, 1, 2))], default=Text("fallback")) as fake:
        side = post(fake, "/v1/messages", {"model": "m-side", "messages": [], "max_tokens": 1})
        counted = post(fake, "/v1/messages/count_tokens", {"model": "m", "messages": []})
        main = post(fake, "/v1/messages?beta=true", {"model": "m-main", "messages": [], "tools": tools})
        after = post(fake, "/v1/messages", {"model": "m-main", "messages": [], "tools": tools})
        assert post(fake, "/api/anything", {})[0] == 200
        assert [r.is_main for r in fake.requests] == [False, False, True, True, False]

    assert json.loads(side[2])["content"][0]["text"] == "Fake title"
    assert json.loads(counted[2])["input_tokens"] > 0
    message = json.loads(main[2])
    assert (message["model"], message["content"][0]["text"], message["stop_reason"]) == (
        "m-main",
        "scripted",
        "end_turn",
    )
    assert message["usage"] == {
        "input_tokens": 7,
        "output_tokens": 3,
        "cache_creation_input_tokens": 1,
        "cache_read_input_tokens": 2,
    }
    assert json.loads(after[2])["content"][0]["text"] == "fallback"


def test_fake_streams_tool_use_and_errors_with_headers() -> None:
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    turns: list[Turn] = [bash("ls", text="Looking."), HttpError.rate_limited(retry_after=7)]
    with FakeAnthropic(turns, headers={"x-extra": "yes"}) as fake:
        status, headers, body = post(fake, "/v1/messages", {"model": "m", "stream": True, "tools": tools})
        error = post(fake, "/v1/messages", {"model": "m", "stream": True, "tools": tools})

    assert status == 200 and headers["Content-Type"] == "text/event-stream" and headers["x-extra"] == "yes"
    events = [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]
    assert [e["type"] for e in events] == [
        "message_start",
        *["content_block_start", "content_block_delta", "content_block_stop"] * 2,
        "message_delta",
        "message_stop",
    ]
    assert events[2]["delta"] == {"type": "text_delta", "text": "Looking."}
    assert events[4]["content_block"]["name"] == "Bash"
    assert json.loads(events[5]["delta"]["partial_json"])["command"] == "ls"
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert error[0] == 429 and error[1]["retry-after"] == "7" and error[1]["x-extra"] == "yes"
    assert json.loads(error[2])["error"]["type"] == "rate_limit_error"
