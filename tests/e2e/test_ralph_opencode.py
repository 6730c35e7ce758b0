"""`ralph run --agent opencode` end to end: the real opencode CLI (pinned 1.18.33, installed from npm by the tests)
against the loopback fake of the OpenAI Chat Completions API (tests/e2e/fake_openai_chat.py).

opencode reads its provider from the `opencode.json` of a private home (tests/e2e/opencode_cli.py); the fake answers
with scripted tool calls, so the real CLI really edits the repository, and ralph reads the real JSON lines it
prints and the database it writes. Nothing here mocks ralph or the CLI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.e2e.fake_openai_chat import FAKE_API_KEY, FakeOpenAIChat, HttpError, Message, Usage, tool_call
from tests.e2e.opencode_cli import MODEL, opencode_config, opencode_env, opencode_executable

pytestmark = pytest.mark.timeout(900)  # the first test may pay for the npm install

USAGE_LIMIT_BODY = {
    "error": {
        "message": "You have reached your usage limit for this billing period.",
        "type": "usage_limit_reached",
        "param": None,
        "code": "usage_limit_reached",
    }
}


@pytest.fixture(scope="session")
def opencode_bin() -> str:
    """The real `opencode` binary of the pinned version (installed once into the test cache)."""
    return opencode_executable()


@pytest.fixture
def chat_api() -> Iterator[FakeOpenAIChat]:
    """A started fake Chat Completions API with an empty script; add turns with `chat_api.add_turns(...)`."""
    with FakeOpenAIChat(models=(MODEL,)) as fake:
        yield fake


@pytest.fixture
def env(tmp_path: Path, chat_api: FakeOpenAIChat, ralph_env: dict[str, str]) -> dict[str, str]:
    """ralph's test environment plus opencode's private home, whose opencode.json names the fake as provider."""
    return opencode_env(tmp_path / "opencode-home", opencode_config(chat_api), ralph_env)


def use_opencode(project: Path, opencode_bin: str) -> None:
    """Config: the installed CLI as opencode.command, no backoff waits, no usage-limit margin."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text().replace("  margin_seconds: 60 ", "  margin_seconds: 0 ")
        + f"\nopencode:\n  command: {json.dumps(opencode_bin)}\n"
        + "\nbackoff:\n  initial_seconds: 0\n"
    )


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def run(ralph: RalphRunner, env: dict[str, str], *args: str) -> Any:
    return ralph("run", "-f", "feat", "--no-archive", "--agent", "opencode", *args, env=env, timeout=300)


def test_write_calls_edit_the_repository_and_the_completion_is_recorded_with_its_usage(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, opencode_bin: str
) -> None:
    use_opencode(project, opencode_bin)
    prd = feature / "prd.json"
    passed = json.loads(prd.read_text())
    for story in passed["userStories"]:
        story["passes"] = True
    # opencode's write tool overwrites a file only once the session has read it.
    chat_api.add_turns(
        tool_call("write", {"filePath": str(project / "work.txt"), "content": "done\n"}, usage=Usage(3000, 40, 1000)),
        tool_call("read", {"filePath": str(prd)}, usage=Usage(3500, 30, 3000)),
        tool_call(
            "write", {"filePath": str(prd), "content": json.dumps(passed, indent=2)}, usage=Usage(4000, 50, 3500)
        ),
        Message("All stories pass. <promise>COMPLETE</promise>", Usage(4500, 60, 4000, reasoning_tokens=20)),
    )
    done = run(ralph, env)  # no --model: opencode uses its config's, which ralph learns from opencode's database
    assert done.returncode == 0, done.stdout + done.stderr

    # The real CLI ran the tools in the project: the file is there, the stories pass.
    assert (project / "work.txt").read_text() == "done\n"
    assert all(story["passes"] for story in read_json(prd)["userStories"])
    requests = chat_api.main_requests
    assert len(requests) == 4 and chat_api.pending == 0  # and no title request: ralph gives the title
    assert all(request.tool_names for request in requests)
    assert "S-1" in json.dumps(requests[0].messages)  # ralph's prompt reached the API, from stdin
    assert requests[1].tool_results and "Wrote file successfully" in json.dumps(requests[1].tool_results)
    assert requests[0].headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    assert requests[0].body["model"] == MODEL

    [line] = metrics(feature)
    # what the fake sent, summed over the four steps: 15,000 prompt tokens of which 11,500 cached, 180 completion
    usage = line["usage"]
    assert (usage["input_tokens"], usage["cache_read_tokens"], usage["output_tokens"]) == (15000 - 11500, 11500, 180)
    assert usage["cache_creation_tokens"] == 0
    # opencode's own price arithmetic, at the prices of opencode.json (PRICE: 2, 8, 0.5 USD per million)
    assert line["cost_usd"] == pytest.approx((3500 * 2.0 + 180 * 8.0 + 11500 * 0.5) / 1e6)
    assert line["model"] == f"fake/{MODEL}" and line["agent"] == "opencode"  # from opencode's database
    assert (line["outcome"], line["success"], line["exit_code"]) == ("complete", True, 0)
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"]) == ("opencode", "complete")


def test_the_usage_limit_exits_2_with_the_reset_the_provider_sent(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, opencode_bin: str
) -> None:
    use_opencode(project, opencode_bin)
    reset = (int(time.time()) // 3600 + 3) * 3600
    # retry-after-ms: 0 makes opencode's own five retries immediate; the reset is in x-ratelimit-reset.
    chat_api.default = HttpError(429, USAGE_LIMIT_BODY, {"retry-after-ms": "0", "x-ratelimit-reset": str(reset)})
    done = run(ralph, env, "--on-usage-limit", "exit")
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(chat_api.main_requests) == 6  # opencode tried six times before it gave up
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_limit")
    limit = status["usageLimit"]
    assert limit["vendor"] == "opencode" and limit["policy"] == "exit"
    assert limit["resetsAt"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset))
    assert limit["message"] == "You have reached your usage limit for this billing period."
    assert [line["outcome"] for line in metrics(feature)] == ["usage-limit"]


@pytest.mark.parametrize(
    ("level", "offered", "withheld"),
    [
        ("ask", {"read", "grep"}, {"write", "edit", "bash"}),
        ("edits", {"read", "write", "edit"}, {"bash"}),
        ("all", {"read", "write", "edit", "bash"}, set()),
    ],
)
def test_each_permissions_level_is_the_tools_opencode_offers(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    env: dict[str, str],
    chat_api: FakeOpenAIChat,
    opencode_bin: str,
    level: str,
    offered: set[str],
    withheld: set[str],
) -> None:
    use_opencode(project, opencode_bin)
    config = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json"
    config.write_text(opencode_config(chat_api, models=(MODEL, "fake-other")))
    chat_api.add_turns(Message("Nothing to do yet."))
    done = run(ralph, env, "-n", "1", "--permissions", level, "--model", "fake/fake-other")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    [request] = chat_api.main_requests
    tools = set(request.tool_names)
    assert offered <= tools and not withheld & tools, tools
    assert request.body["model"] == "fake-other"  # -m, over the config's model
    assert metrics(feature)[0]["model"] == "fake/fake-other"
