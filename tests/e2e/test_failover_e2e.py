"""Failover end to end, with both real CLIs: Claude Code (against the fake Anthropic API, logged in with a
subscription token so that it honours the unified rate-limit headers) hits its 5-hour limit, the real Codex
(against the fake Responses API) takes the story over, and Claude Code comes back once its reset has passed.

The reset is a few seconds ahead; Codex's first answer is held by the fake until that instant has passed, so the
order of events is fixed by the fake, not by how fast the machine is.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.e2e.codex_bwrap import sandboxed
from tests.e2e.conftest import claude_env, codex_env
from tests.e2e.fake_anthropic import FakeAnthropic, HttpError, Text, bash, unified_headers
from tests.e2e.fake_openai import FakeOpenAI, Message, Turn, shell
from tests.e2e.test_ralph_claude import finish_story

pytestmark = pytest.mark.timeout(900)  # the first test may pay for the npm installs

CODEX_MODEL = "gpt-5.1-codex"


def mark_passing(story: str) -> str:
    """The story done without a commit (Codex's workspace-write sandbox makes .git read-only)."""
    mark = (
        "import json; p = '.ralph/feat/prd.json'; d = json.load(open(p)); "
        f"[s.update(passes=True) for s in d['userStories'] if s['id'] == {story!r}]; "
        "json.dump(d, open(p, 'w'), indent=2)"
    )
    return f"echo {story} > {story}.txt && python3 -c {shlex.quote(mark)} && echo marked"


def after(instant: list[int], reply: Turn) -> Any:
    """A turn that answers only once `instant[0]` (unix seconds, set by an earlier turn) has passed."""

    def answer(request: object) -> Turn:
        while time.time() <= instant[0]:
            time.sleep(0.05)
        return reply

    return answer


def test_claude_hits_its_limit_codex_takes_over_and_claude_returns_after_the_reset(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    tmp_path: Path,
    ralph_env: dict[str, str],
    fake_api: FakeAnthropic,
    openai_api: FakeOpenAI,
    claude_bin: str,
    codex_bin: str,
    bwrap_dir: Path,
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text().replace("  margin_seconds: 60 ", "  margin_seconds: 0 ")  # the limit ends at the reset
        + f'\nclaude:\n  command: {json.dumps(claude_bin)}\n  allowed_tools: "Bash,Write,Read"\n'
        + f"codex:\n  command: {json.dumps(codex_bin)}\n"
        + "agents: [claude, codex]\nbackoff:\n  initial_seconds: 0\n"
    )
    reset: list[int] = []

    def limited(request: object) -> HttpError:
        """The 5-hour limit, resetting a few seconds after it is sent: long enough for ralph to read it first."""
        reset.append(int(time.time()) + 8)
        return HttpError(429, "rate_limit_error", "limit", unified_headers("rejected", reset[0]))

    fake_api.add_turns(
        limited,
        bash(finish_story("S-2")),
        Text("S-2 is done."),
        bash(finish_story("S-3")),
        Text("S-3 is done."),
    )
    openai_api.add_turns(after(reset, shell(mark_passing("S-1"))), Message("S-1 is done."))
    claude = claude_env(tmp_path / "claude-home", fake_api, oauth=True)
    codex = codex_env(tmp_path / "codex-home", openai_api, ralph_env, CODEX_MODEL)
    env = {
        **claude,
        **{key: value for key, value in codex.items() if key.startswith(("CODEX_", "RALPH_FAKE"))},
        **{key: value for key, value in ralph_env.items() if key.startswith(("RALPH_", "GIT_"))},
        "PATH": ralph_env["PATH"],
        "NO_COLOR": "1",
    }
    env.pop("IS_SANDBOX", None)
    env, flags = sandboxed(env, bwrap_dir)  # the bwrap Codex's own sandbox uses is the test's to decide
    done = ralph("run", "-f", "feat", "--no-archive", "--on-usage-limit", "exit", *flags, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr

    lines = [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
    assert [line["agent"] for line in lines] == ["claude", "codex", "claude", "claude"]
    assert [line["outcome"] for line in lines] == ["usage-limit", "complete", "complete", "complete"]
    assert lines[1]["model"] == CODEX_MODEL and lines[1]["usage"]["input_tokens"] > 0
    assert all((project / f"S-{n}.txt").exists() for n in (1, 2, 3))
    assert "claude is limited: the next runs on codex" in done.stdout
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["storiesComplete"], status["agent"]) == ("complete", 3, "claude")
    shares = {share["agent"]: share for share in status["tokens"]["byAgent"]}
    assert (shares["claude"]["calls"], shares["codex"]["calls"]) == (3, 1)
    assert shares["codex"]["costUsd"] > 0 and shares["claude"]["costUsd"] > 0
    assert "By agent: claude 3 calls" in done.stdout
    # The limit was kept for every loop of the account, until the reset the API sent.
    book = json.loads((Path(ralph_env["RALPH_HOME"]) / "agent-limits.json").read_text())["limits"]
    [(key, mark)] = book.items()
    assert key.startswith("claude/api-key:") and mark["until"] == time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset[0])
    )
