"""Failover at the CLI's edge: the real `ralph run --agent claude,codex`, with both CLIs replaced by replays of real
runs (tests/agents/replay_claude.py, replay_codex.py).

What failover decides and records (the limited or logged-out agent handing over, each iteration's agent in the
records, the book of limits shared by every loop of an account, every agent limited, the order a dry run says) is
tests/engine/test_failover.py's, in-process. Here: a bad list of agents or a damaged book of limits in one line,
ralph killed (SIGKILL) in the second agent's iteration, and opencode's real process ended by its idle timeout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, agent_cmd
from tests.integration import test_claude_backend as claude_replay
from tests.integration import test_codex_backend as codex_replay
from tests.integration import test_opencode_backend as opencode_replay
from tests.integration.helpers import entry_fields, progress_entries, snapshot

CLAUDE_LIMIT = "limit-ahead"  # Claude Code's 5-hour limit, rejected, resetting five hours from now


class Agents:
    """A replayed `claude` and a replayed `codex`, both named in the project's config."""

    def __init__(self, project: Path, tmp_path: Path, claude: list[str], codex: list[str]) -> None:
        self.claude = claude_replay.Replay(tmp_path, claude)
        self.codex = codex_replay.Replay(tmp_path, codex)
        self.claude.configure(project)
        self.codex.configure(project)

    def order(self) -> list[str]:
        """Who was called, claude's calls first (each replay counts its own)."""
        return ["claude"] * len(self.claude.calls()) + ["codex"] * len(self.codex.calls())


# Claude's account is its config folder here: no key in the environment decides it instead.
ACCOUNT_ENV = {
    "CLAUDE_CONFIG_DIR": "/nonexistent/claude-config",
    "ANTHROPIC_API_KEY": "",
    "CLAUDE_CODE_OAUTH_TOKEN": "",
}


def run(ralph: RalphRunner, *args: str) -> Any:
    return ralph("run", "-f", "feat", "--no-archive", "--on-usage-limit", "exit", *args, env=ACCOUNT_ENV)


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


@pytest.mark.parametrize(
    ("args", "config", "words"),
    [
        (["--agent", "claude,,codex"], "", "--agent: expected agent names, got an empty or non-text one"),
        (["--agent", "claude,claude"], "", "--agent: claude listed twice"),
        (["--agent", "claude,nope"], "", "--agent: unknown agent 'nope'"),
        ([], "agents: [claude, 5]\n", ".ralph/config.yaml: agents: expected agent names"),
        ([], "agents: {claude: 1}\n", ".ralph/config.yaml: agents: expected an agent name, or a list of them"),
    ],
)
def test_a_bad_list_of_agents_is_one_line_naming_it(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, args: list[str], config: str, words: str
) -> None:
    Agents(project, tmp_path, claude=["work"], codex=["work"])
    path = project / ".ralph" / "config.yaml"
    path.write_text(path.read_text() + config)
    before = snapshot(project)
    done = ralph("run", "-f", "feat", *args)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr
    assert snapshot(project) == before


def test_a_damaged_book_of_limits_is_one_line_naming_it(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    agents = Agents(project, tmp_path, claude=["work"], codex=["work"])
    book = Path(ralph_env["RALPH_HOME"]) / "agent-limits.json"
    book.parent.mkdir(parents=True, exist_ok=True)
    book.write_text('{"schema_version": 1, "limits": {"claude/x": {"until": "soon"}}}')
    before = snapshot(project)
    done = run(ralph, "--agent", "claude,codex")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{book}: not a valid file of agent limits" in done.stderr and "delete it" in done.stderr
    assert agents.order() == [] and snapshot(project) == before


def test_an_iteration_killed_with_ralph_is_recorded_for_the_agent_that_ran_it(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    """claude is limited, the command agent takes over and kills ralph (SIGKILL) in the middle of its
    iteration: the next run records that iteration for the command agent, not for the first of the list."""
    agents = Agents(project, tmp_path, claude=[CLAUDE_LIMIT], codex=["work"])
    marker = tmp_path / "killed-once"
    crash = agent_cmd("crash_agent.py", "--once-marker", str(marker), "--kill-ralph", "--hang")
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"agent:\n  command: {json.dumps(crash)}\nagents: [claude, command]\n")
    killed = ralph("run", "-f", "feat", "-n", "3", "--on-usage-limit", "exit", env=ACCOUNT_ENV)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    (Path(ralph_env["RALPH_HOME"]) / "agent-limits.json").unlink()  # claude is the first choice again
    again = ralph("run", "-f", "feat", "-n", "1", "--on-usage-limit", "exit", env=ACCOUNT_ENV)
    assert "ralph was killed during this iteration" in again.stdout + again.stderr
    told = entries(feature)
    assert [(entry["Iteration"], entry["Agent"].split(" · ")[0]) for entry in told][:2] == [
        ("1", "claude"),
        ("2", "command"),
    ]
    assert told[1]["Status"] == "interrupted"
    assert len(agents.claude.calls()) == 2  # the second run started on claude, which met its limit again


def test_opencode_waiting_out_a_spent_quota_in_silence_hands_over_at_its_idle_timeout(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    opencode = opencode_replay.Replay(tmp_path, ["mock_usage_limit_waiting_json"])
    opencode.configure(project)
    agents = Agents(project, tmp_path, claude=["work"], codex=["work"])
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + 'process:\n  idle_timeout_minutes: "1s"\n')
    done = run(ralph, "--agent", "opencode,claude")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(opencode.calls()) == 1 and len(agents.claude.calls()) == 3
    assert "opencode is limited: the next runs on claude" in done.stdout
