"""Failover in-process (`--agent claude,codex`): runs built as `ralph run` builds them, each CLI's real runs played
through the replay runner into its own backend's parser (harness_backends.py's `Clis`: each launch from the plan of
the CLI it starts). The limited or logged-out agent hands over to the next, the records name each iteration's
agent, the limit is kept per account in RALPH_HOME for every loop, and when every agent is limited the usage-limit
policy applies as with one agent.

The CLI's side (a bad list of agents or a damaged book of limits in one line, ralph killed in an iteration of the
second agent, opencode's idle timeout handing over) is tests/integration/test_failover.py's.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import entries, metrics, ralph, run
from tests.engine.harness_backends import USAGE_EXIT, Clis, add_config, dry_run, ready, replays

CHAIN = "claude,codex"
# The words `ralph run` was given: the command it prints to run again repeats them.
ARGV = ("run", "-f", "feat", "--no-archive", "--on-usage-limit", "exit", "--agent", CHAIN)
# Claude's account is its config folder here: no key in the environment decides it instead.
ACCOUNT_ENV = {
    "CLAUDE_CONFIG_DIR": "/nonexistent/claude-config",
    "ANTHROPIC_API_KEY": "",
    "CLAUDE_CODE_OAUTH_TOKEN": "",
}
CLAUDE_KEY = "claude/login:/nonexistent/claude-config"


@pytest.fixture
def chain(project: Path, feature: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The feature, `claude` and `codex` found, Claude's account its config folder, and no backoff wait."""
    ready(project, tmp_path, monkeypatch, "claude", "codex")
    for key, value in ACCOUNT_ENV.items():
        monkeypatch.setenv(key, value)
    return feature


def failover(project: Path, agents: Clis, **how: Any) -> Any:
    """`ralph run -f feat --no-archive --on-usage-limit exit --agent claude,codex`, in-process."""
    return run(project, agents, backend=CHAIN, flags=USAGE_EXIT, argv=ARGV, **how)


def limits_book(home: Path) -> dict[str, Any]:
    path = home / "agent-limits.json"
    return read_json(path)["limits"] if path.exists() else {}


def test_a_usage_limit_hands_the_work_to_the_next_agent_which_finishes_it(
    project: Path, chain: Path, home: Path
) -> None:
    agents = Clis(claude=replays("claude", "limit-ahead"), codex=replays("codex", "work"))

    done = failover(project, agents)

    assert done.outcome.reason is ExitReason.COMPLETE
    assert agents.order == ["claude", "codex", "codex", "codex"]  # claude once, then codex for all
    # The limited call is not counted, and says who takes over; each entry names the agent that ran.
    told = entries(chain)
    assert [entry["Agent"].split(" · ")[0] for entry in told] == ["claude", "codex", "codex", "codex"]
    assert told[0]["Status"] == "usage-limit"
    assert "claude is limited: the next runs on codex" in done.screen
    assert [line["agent"] for line in metrics(chain)] == ["claude", "codex", "codex", "codex"]
    status = read_json(chain / "status.json")
    assert (status["agent"], status["exitReason"], status["storiesComplete"]) == ("codex", "complete", 3)
    assert [share["agent"] for share in status["tokens"]["byAgent"]] == ["claude", "codex"]
    assert [share["calls"] for share in status["tokens"]["byAgent"]] == [1, 3]
    assert "By agent: claude 1 call" in done.screen and "codex 3 calls" in done.screen
    shown = ralph("status", "-f", "feat")
    assert "Agent:      codex  (this run: claude 1 call, codex 3 calls)" in shown.out
    # codex ran without --model (claude's) and named no model: its calls have no price, and no screen says $0
    assert status["tokens"]["callsWithoutCost"] == 3
    assert "+ the cost of 3 calls not reported" in shown.out
    assert "+ the cost of 3 iterations not reported" in done.screen
    # --model was claude's alone: codex ran with its own default, unchecked (no model retries).
    assert all("-m" not in launch.command.argv for launch in agents.launched("codex"))
    # The limit is kept for every loop of this account, until its reset (or the fallback wait when none).
    [(key, mark)] = limits_book(home).items()
    assert key == CLAUDE_KEY and mark["kind"] == "usage_limit"
    assert datetime.fromisoformat(mark["until"]) > datetime.now(UTC)


def test_another_loop_skips_an_account_the_book_says_is_limited_and_returns_after_its_reset(
    project: Path, chain: Path, home: Path
) -> None:
    agents = Clis(claude=replays("claude", "work"), codex=replays("codex", "work"))

    first = failover(project, agents, n=1)

    assert first.outcome.reason is ExitReason.MAX_ITERATIONS  # claude ran, as the first agent
    assert agents.order == ["claude"]
    book = home / "agent-limits.json"
    assert not book.exists()  # no limit was hit: nothing written
    # Another loop of this account recorded claude's limit (the key as that loop wrote it) ...
    later = (datetime.now(UTC) + timedelta(hours=5)).isoformat()
    book.write_text(json.dumps({"schema_version": 1, "limits": {CLAUDE_KEY: {"until": later, "kind": "usage_limit"}}}))

    second = failover(project, agents, n=1)

    assert second.outcome.reason is ExitReason.MAX_ITERATIONS
    assert agents.order == ["claude", "codex"]  # ... so this one went straight to codex, without a call
    # Once the reset has passed, claude is the first choice again.
    earlier = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    book.write_text(
        json.dumps({"schema_version": 1, "limits": {CLAUDE_KEY: {"until": earlier, "kind": "usage_limit"}}})
    )

    third = failover(project, agents, n=1)

    assert third.outcome.reason.exit_code in (0, 1)
    assert agents.order == ["claude", "codex", "claude"]


def test_a_failed_login_moves_to_the_next_agent_for_the_rest_of_the_run(project: Path, chain: Path, home: Path) -> None:
    agents = Clis(claude=replays("claude", "claude_mock_auth_401_streamjson"), codex=replays("codex", "work"))

    done = failover(project, agents)

    assert done.outcome.reason is ExitReason.COMPLETE
    assert agents.order == ["claude", "codex", "codex", "codex"]
    assert "claude cannot work: the next runs on codex" in done.screen
    assert limits_book(home) == {}  # a login is this run's business, not a limit for every loop


def test_when_every_agent_is_limited_the_usage_limit_policy_applies(project: Path, chain: Path, home: Path) -> None:
    agents = Clis(claude=replays("claude", "limit-ahead"), codex=replays("codex", "limit-ahead"))

    done = failover(project, agents)

    assert done.outcome.reason is ExitReason.USAGE_LIMIT and done.outcome.reason.exit_code == 2  # --on-usage-limit exit
    assert agents.order == ["claude", "codex"]
    status = read_json(chain / "status.json")
    ends = {key.split("/")[0]: mark["until"] for key, mark in limits_book(home).items()}
    assert sorted(ends) == ["claude", "codex"]
    # the limit that ends first is named; Codex says its reset to the minute, Claude to the second, so they tie
    # when Claude's came at a minute's first second: then the list's first
    first = "codex" if ends["codex"] < ends["claude"] else "claude"
    assert status["exitReason"] == "usage_limit" and status["usageLimit"]["vendor"] == first
    assert "--agent claude,codex" in done.screen  # the command to run again keeps the chain


def test_agents_in_the_config_file_and_the_dry_run_says_the_order(project: Path, chain: Path) -> None:
    add_config(project, "agents: [codex, claude]\n")

    shown = dry_run(project, backend=None)

    assert "# Agent: codex (from .ralph/config.yaml (agents))" in shown
    assert "# Failover: codex → claude" in shown
    assert "#   claude: " in shown and "--permission-mode acceptEdits" in shown  # the other agent's argv
    flag = dry_run(project, backend="claude")  # a flag beats the file
    assert "# Agent: claude (from --agent)" in flag and "# Failover" not in flag
