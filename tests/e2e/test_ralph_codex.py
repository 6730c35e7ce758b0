"""`ralph run --agent codex` end to end: the real Codex CLI (pinned 0.169.0, installed from npm by the tests)
against the loopback fake of the OpenAI Responses API (tests/e2e/fake_openai.py).

Codex reads its provider from `$CODEX_HOME/config.toml` in a private HOME; the fake answers with scripted tool
calls, so the real CLI really edits the repository, and ralph reads the real `exec --json` lines it prints and
the session file it writes. Nothing here mocks ralph or the CLI.

Which bubblewrap Codex's sandbox runs is the test's choice, not the machine's (tests/e2e/codex_bwrap.py): the
packaged one where it can create namespaces (else the run goes without Codex's sandbox, `--permissions all`), or a
stand-in that fails as bwrap does on a machine without user namespaces.
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
from tests.e2e.codex_bwrap import (
    NAMESPACE_DENIED,
    sandboxed,
    use_broken,
    with_folder_first,
)
from tests.e2e.conftest import codex_env
from tests.e2e.fake_openai import (
    FAKE_API_KEY,
    FakeOpenAI,
    HttpError,
    Message,
    Usage,
    shell,
)

MODEL = "gpt-5.1-codex"  # config.toml's model: ralph passes no -m, so it learns the model from the session file

pytestmark = pytest.mark.timeout(900)  # the first test may pay for the npm install


@pytest.fixture
def env(tmp_path: Path, openai_api: FakeOpenAI, ralph_env: dict[str, str]) -> dict[str, str]:
    return codex_env(tmp_path / "codex-home", openai_api, ralph_env, MODEL)


def use_codex(project: Path, codex_bin: str) -> None:
    """Config: the installed CLI as codex.command, no backoff waits, no usage-limit margin."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text().replace("  margin_seconds: 60 ", "  margin_seconds: 0 ")
        + f"\ncodex:\n  command: {json.dumps(codex_bin)}\n"
        + "\nbackoff:\n  initial_seconds: 0\n"
    )


def finish_all_stories() -> str:
    """A shell command (run by Codex's exec_command tool) that writes a file and marks every story passing.

    No commit: under ralph's default `-s workspace-write` Codex's sandbox makes `.git` read-only."""
    mark = (
        "import json; p = '.ralph/feat/prd.json'; d = json.load(open(p)); "
        "[s.update(passes=True) for s in d['userStories']]; json.dump(d, open(p, 'w'), indent=2)"
    )
    return f"echo done > work.txt && python3 -c {shlex.quote(mark)} && echo marked"


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def run(ralph: RalphRunner, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return ralph("run", "-f", "feat", "--no-archive", "--agent", "codex", *args, env=env, timeout=300)


def test_a_tool_call_edits_the_repository_and_the_completion_is_recorded_with_its_usage(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    env: dict[str, str],
    openai_api: FakeOpenAI,
    codex_bin: str,
    bwrap_dir: Path,
) -> None:
    use_codex(project, codex_bin)
    openai_api.add_turns(
        shell(finish_all_stories(), Usage(input_tokens=3000, cached_tokens=2000, output_tokens=40)),
        Message("All stories pass. <promise>COMPLETE</promise>", Usage(4000, 3500, 60, reasoning_tokens=20)),
    )
    env, flags = sandboxed(env, bwrap_dir)
    done = run(ralph, env, *flags)
    assert done.returncode == 0, done.stdout + done.stderr

    # The real CLI ran the command in the project: the file is there, the stories pass.
    assert (project / "work.txt").read_text() == "done\n"
    assert all(story["passes"] for story in read_json(feature / "prd.json")["userStories"])
    requests = openai_api.main_requests
    assert len(requests) == 2 and openai_api.pending == 0
    assert "marked" in json.dumps(requests[1].body["input"][-1])  # the tool's output went back to the model
    assert requests[0].headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    assert "S-1" in json.dumps(requests[0].body["input"])  # ralph's prompt reached the API

    [line] = metrics(feature)
    # what the fake sent, summed over the turn's two responses by Codex: input 7000 of which 5500 cached
    assert line["usage"]["input_tokens"] == 7000 - 5500
    assert line["usage"]["cache_read_tokens"] == 5500
    assert line["usage"]["output_tokens"] == 100
    assert line["model"] == MODEL and line["agent"] == "codex"
    assert line["cost_usd"] == round((1500 * 1.25 + 5500 * 0.125 + 100 * 10.0) / 1e6, 6)
    assert (line["outcome"], line["success"], line["exit_code"]) == ("complete", True, 0)
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"], status["model"]) == ("codex", "complete", MODEL)


def test_the_usage_limit_exits_2_with_the_reset_codex_was_sent(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], openai_api: FakeOpenAI, codex_bin: str
) -> None:
    use_codex(project, codex_bin)
    reset = (int(time.time()) // 3600 + 3) * 3600  # on the minute: Codex prints the reset to the minute
    openai_api.add_turns(HttpError.usage_limit(reset))
    done = run(ralph, env, "--on-usage-limit", "exit")
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(openai_api.main_requests) == 1  # a usage limit is not retried by Codex
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_limit")
    limit = status["usageLimit"]
    assert limit["vendor"] == "codex" and limit["policy"] == "exit"
    assert limit["resetsAt"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset))
    assert "usage limit" in limit["message"]
    assert [line["outcome"] for line in metrics(feature)] == ["usage-limit"]


def test_a_sandbox_that_cannot_create_namespaces_stops_the_loop_with_bwraps_reason(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    env: dict[str, str],
    openai_api: FakeOpenAI,
    codex_bin: str,
    bwrap_dir: Path,
) -> None:
    """Issue 31: Codex finishes the turn as if all went well and prints no item for the refused command; ralph
    finds bwrap's line in the session file and stops rather than spend call after call on "no progress"."""
    use_codex(project, codex_bin)
    openai_api.add_turns(shell(finish_all_stories()), Message("All stories pass. <promise>COMPLETE</promise>"))
    use_broken(bwrap_dir)
    done = run(ralph, with_folder_first(env, bwrap_dir), "-n", "3")
    assert done.returncode == 1, done.stdout + done.stderr

    told = f"codex's sandbox could not run its commands: {NAMESPACE_DENIED}"
    assert told in done.stdout
    assert len(openai_api.main_requests) == 2 and openai_api.pending == 0  # one call: no retry, no second iteration
    assert "Permission denied" in json.dumps(openai_api.main_requests[1].body["input"][-1])  # what the model saw
    assert not (project / "work.txt").exists()
    assert not any(story["passes"] for story in read_json(feature / "prd.json")["userStories"])
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("failed", "agent_error")
    assert status["exitMessage"].startswith(told) and "--permissions all" in status["exitMessage"]
