"""`ralph run --agent aider` end to end: the real aider (pinned 0.86.2, installed from PyPI by the tests) against the
loopback fake of the OpenAI Chat Completions API (tests/e2e/fake_openai_chat.py).

Aider edits files through its edit format, in the model's text: the fake answers with SEARCH/REPLACE blocks, so
the real aider really writes the repository, and ralph reads the real text it prints. Nothing here mocks ralph or
aider; the environment only points aider at the fake (OPENAI_API_BASE, a fake key) and keeps every request on
the machine (aider_cli.aider_env).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.e2e.aider_cli import aider_env, aider_executable
from tests.e2e.fake_openai_chat import FAKE_API_KEY, FakeOpenAIChat, HttpError, Message, Request

MODEL = "openai/gpt-4o"  # a model in litellm's price table: aider prints a cost for it
USAGE_REPORT = re.compile(r"^Tokens: (\S+) sent, (\S+) received\. Cost: \$\S+ message, \$(\S+) session\.$", re.M)

pytestmark = pytest.mark.timeout(1800)  # the first test may pay for the install from PyPI (minutes)


@pytest.fixture(scope="session")
def aider_bin() -> str:
    """The pinned aider (installed once into the test cache)."""
    return aider_executable()


@pytest.fixture
def chat_api() -> Iterator[FakeOpenAIChat]:
    with FakeOpenAIChat(models=("gpt-4o",)) as fake:
        yield fake


@pytest.fixture
def env(tmp_path: Path, chat_api: FakeOpenAIChat, ralph_env: dict[str, str], aider_bin: str) -> dict[str, str]:
    return aider_env(ralph_env, tmp_path / "aider-home", chat_api)


def use_aider(project: Path, aider_bin: str) -> None:
    """Config: the installed aider as aider.command, no backoff waits."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text() + f"\naider:\n  command: {json.dumps(aider_bin)}\nbackoff:\n  initial_seconds: 0\n"
    )


def block(path: str, search: str, replace: str) -> str:
    """One edit in aider's diff format (the format it uses with gpt-4o): the file, then SEARCH/REPLACE."""
    return f"{path}\n```\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def finish_every_story(feature: Path) -> Any:
    """A reply, made when aider asks, that creates work.txt and sets every story of prd.json passing: the
    SEARCH part is the file as it is on disk then, the REPLACE part the same stories passing."""

    def reply(request: Request) -> Message:
        before = (feature / "prd.json").read_text()
        prd = json.loads(before)
        for story in prd["userStories"]:
            story["passes"] = True
        after = json.dumps(prd, indent=2) + "\n"
        text = (
            "I wrote the work and marked the stories.\n\n"
            + block("work.txt", "", "done\n")
            + "\n"
            + block(".ralph/feat/prd.json", before, after)
            + "\nAll stories pass. <promise>COMPLETE</promise>\n"
        )
        return Message(text)

    return reply


def run(ralph: RalphRunner, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return ralph("run", "-f", "feat", "--no-archive", "--agent", "aider", "--model", MODEL, *args, env=env, timeout=600)


def test_aider_edits_the_repository_and_the_completion_is_recorded_with_its_usage(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, aider_bin: str
) -> None:
    use_aider(project, aider_bin)
    chat_api.add_turns(finish_every_story(feature))
    done = run(ralph, env)
    assert done.returncode == 0, done.stdout + done.stderr

    # The real aider applied the model's edit blocks: the new file is there, the stories pass.
    assert (project / "work.txt").read_text() == "done\n"
    assert all(story["passes"] for story in read_json(feature / "prd.json")["userStories"])
    [request] = chat_api.main_requests
    assert request.headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    assert request.body["model"] == "gpt-4o"  # litellm sends the name without aider's provider prefix
    assert "S-1" in json.dumps(request.messages)  # ralph's prompt, read from --message-file, reached the API
    # Aider committed nothing (--no-auto-commits): ralph committed the accepted story for it (aider cannot commit,
    # so git.auto_commit is on by default). Aider's own files (chat history, repo-map cache) are kept out of git by
    # .git/info/exclude, not by a change to .gitignore, and are not in that commit.
    log = subprocess.run(["git", "log", "--format=%s"], cwd=project, capture_output=True, text=True, check=True)
    assert log.stdout.splitlines() == ["S-1: Story 1", "initial"]
    shown = subprocess.run(
        ["git", "show", "--name-only", "--format="], cwd=project, capture_output=True, text=True, check=True
    )
    assert not any(name.startswith(".aider") for name in shown.stdout.splitlines())
    assert (project / ".aider.tags.cache.v4").is_dir() and not (project / ".gitignore").exists()
    assert "/.aider*" in (project / ".git" / "info" / "exclude").read_text().splitlines()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True, check=True)
    assert ".aider" not in status.stdout and "work.txt" not in status.stdout  # the story's file: in ralph's commit
    assert "work.txt" in shown.stdout.splitlines()

    # What ralph recorded is what aider's usage report said (aider counts a streamed reply with the model's
    # tokenizer: OpenAI streams no usage unless asked, and aider does not ask).
    output = (feature / "logs" / "iteration-1.log").read_text()
    [(sent, received, cost)] = USAGE_REPORT.findall(output)
    [line] = [json.loads(text) for text in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
    assert line["usage"]["input_tokens"] == round(float(sent.rstrip("k")) * (1000 if sent.endswith("k") else 1))
    assert line["usage"]["output_tokens"] == int(received) and line["cost_usd"] == float(cost) > 0
    assert line["model"] == MODEL and line["agent"] == "aider"
    assert (line["outcome"], line["success"], line["exit_code"]) == ("complete", True, 0)
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"], status["model"]) == ("aider", "complete", MODEL)

    analyzed = ralph("analyze", "--json", str(feature / "logs" / "iteration-1.log"), env=env)
    assert json.loads(analyzed.stdout)["format"] == "aider-text", analyzed.stderr


def test_a_spent_quota_stops_the_run_though_aider_exits_0(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], chat_api: FakeOpenAIChat, aider_bin: str
) -> None:
    """Aider retries a 429 itself for over a minute (its backoff is fixed in 0.86.2: 0.25 s doubled up to 32 s,
    no flag or variable shortens it), then prints the error and exits 0: the only slow test here (about 100 s)."""
    use_aider(project, aider_bin)
    chat_api.default = HttpError.insufficient_quota()
    started = time.monotonic()
    done = run(ralph, env)
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "no quota or credit left" in said and "You exceeded your current quota" in said
    # One iteration, ralph did not try again: aider's 9 attempts, each sent 3 times by the OpenAI client litellm
    # uses (its own max_retries, 2).
    assert len(chat_api.main_requests) == 27
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("failed", "agent_error")
    [line] = [json.loads(text) for text in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
    assert line["exit_code"] == 0 and line["success"] is False
    assert time.monotonic() - started < 300
