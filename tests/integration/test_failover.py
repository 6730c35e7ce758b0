"""Failover through the real `ralph run --agent claude,codex`, with both CLIs replaced by replays of real runs
(tests/agents/replay_claude.py, replay_codex.py): the limited or logged-out agent hands over to the next, the
records name each iteration's agent, the limit is kept per account in RALPH_HOME for every loop, and when every
agent is limited the usage-limit policy applies as with one agent.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration import test_claude_backend as claude_replay
from tests.integration import test_codex_backend as codex_replay
from tests.integration import test_opencode_backend as opencode_replay
from tests.integration.helpers import entry_fields, progress_entries, snapshot

CLAUDE_LIMIT = "limit-ahead"  # Claude Code's 5-hour limit, rejected, resetting five hours from now
CLAUDE_LOGGED_OUT = "claude_mock_auth_401_streamjson"
CODEX_LIMIT = "limit-ahead"  # Codex's usage limit, resetting five hours from now


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


def limits_book(ralph_env: dict[str, str]) -> dict[str, Any]:
    path = Path(ralph_env["RALPH_HOME"]) / "agent-limits.json"
    return json.loads(path.read_text())["limits"] if path.exists() else {}


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def test_a_usage_limit_hands_the_work_to_the_next_agent_which_finishes_it(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    agents = Agents(project, tmp_path, claude=[CLAUDE_LIMIT], codex=["work"])
    done = run(ralph, "--agent", "claude,codex")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(agents.claude.calls()) == 1 and len(agents.codex.calls()) == 3  # claude once, then codex for all
    # The limited call is not counted, and says who takes over; each entry names the agent that ran.
    told = entries(feature)
    assert [entry["Agent"].split(" · ")[0] for entry in told] == ["claude", "codex", "codex", "codex"]
    assert told[0]["Status"] == "usage-limit"
    assert "claude is limited: the next runs on codex" in done.stdout
    assert [line["agent"] for line in metrics(feature)] == ["claude", "codex", "codex", "codex"]
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"], status["storiesComplete"]) == ("codex", "complete", 3)
    assert [share["agent"] for share in status["tokens"]["byAgent"]] == ["claude", "codex"]
    assert [share["calls"] for share in status["tokens"]["byAgent"]] == [1, 3]
    assert "By agent: claude 1 call" in done.stdout and "codex 3 calls" in done.stdout
    shown = ralph("status", "-f", "feat")
    assert "Agent:      codex  (this run: claude 1 call, codex 3 calls)" in shown.stdout
    # codex ran without --model (claude's) and named no model: its calls have no price, and no screen says $0
    assert status["tokens"]["callsWithoutCost"] == 3
    assert "+ the cost of 3 calls not reported" in shown.stdout
    assert "+ the cost of 3 iterations not reported" in done.stdout
    # --model was claude's alone: codex ran with its own default, unchecked (no model retries).
    assert all("-m" not in call["args"] for call in agents.codex.calls())
    # The limit is kept for every loop of this account, until its reset (or the fallback wait when none).
    [(key, mark)] = limits_book(ralph_env).items()
    assert key == "claude/login:/nonexistent/claude-config" and mark["kind"] == "usage_limit"
    assert datetime.fromisoformat(mark["until"]) > datetime.now(UTC)


def test_another_loop_skips_an_account_the_book_says_is_limited_and_returns_after_its_reset(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    agents = Agents(project, tmp_path, claude=["work"], codex=["work"])
    first = run(ralph, "--agent", "claude,codex", "-n", "1")
    assert first.returncode == 1, first.stdout + first.stderr  # max iterations: claude ran, as the first agent
    assert agents.order() == ["claude"]
    book = Path(ralph_env["RALPH_HOME"]) / "agent-limits.json"
    assert not book.exists()  # no limit was hit: nothing written
    # Another loop of this account recorded claude's limit (the key as that loop wrote it) ...
    key = "claude/login:/nonexistent/claude-config"
    later = (datetime.now(UTC) + timedelta(hours=5)).isoformat()
    book.write_text(json.dumps({"schema_version": 1, "limits": {key: {"until": later, "kind": "usage_limit"}}}))
    second = run(ralph, "--agent", "claude,codex", "-n", "1")
    assert second.returncode == 1, second.stdout + second.stderr
    assert agents.order() == ["claude", "codex"]  # ... so this one went straight to codex, without a call
    # Once the reset has passed, claude is the first choice again.
    earlier = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    book.write_text(json.dumps({"schema_version": 1, "limits": {key: {"until": earlier, "kind": "usage_limit"}}}))
    third = run(ralph, "--agent", "claude,codex", "-n", "1")
    assert third.returncode in (0, 1), third.stdout + third.stderr
    assert agents.order() == ["claude", "claude", "codex"]


def test_a_failed_login_moves_to_the_next_agent_for_the_rest_of_the_run(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    agents = Agents(project, tmp_path, claude=[CLAUDE_LOGGED_OUT], codex=["work"])
    done = run(ralph, "--agent", "claude,codex")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(agents.claude.calls()) == 1 and len(agents.codex.calls()) == 3
    assert "claude cannot work: the next runs on codex" in done.stdout
    assert limits_book(ralph_env) == {}  # a login is this run's business, not a limit for every loop


def test_when_every_agent_is_limited_the_usage_limit_policy_applies(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    agents = Agents(project, tmp_path, claude=[CLAUDE_LIMIT], codex=[CODEX_LIMIT])
    done = run(ralph, "--agent", "claude,codex")
    assert done.returncode == 2, done.stdout + done.stderr  # --on-usage-limit exit
    assert agents.order() == ["claude", "codex"]
    status = read_json(feature / "status.json")
    ends = {key.split("/")[0]: mark["until"] for key, mark in limits_book(ralph_env).items()}
    assert sorted(ends) == ["claude", "codex"]
    # the limit that ends first is named; Codex says its reset to the minute, Claude to the second, so they tie
    # when Claude's came at a minute's first second: then the list's first
    first = "codex" if ends["codex"] < ends["claude"] else "claude"
    assert status["exitReason"] == "usage_limit" and status["usageLimit"]["vendor"] == first
    assert "--agent claude,codex" in done.stdout + done.stderr  # the command to run again keeps the chain


def test_agents_in_the_config_file_and_the_dry_run_says_the_order(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    Agents(project, tmp_path, claude=["work"], codex=["work"])
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "agents: [codex, claude]\n")
    dry = ralph("run", "-f", "feat", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "# Agent: codex (from .ralph/config.yaml (agents))" in dry.stdout
    assert "# Failover: codex → claude" in dry.stdout
    assert "#   claude: " in dry.stdout and "--permission-mode acceptEdits" in dry.stdout  # the other agent's argv
    flag = ralph("run", "-f", "feat", "--dry-run", "--agent", "claude")  # a flag beats the file
    assert "# Agent: claude (from --agent)" in flag.stdout and "# Failover" not in flag.stdout


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
