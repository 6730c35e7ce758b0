"""The opencode backend's command: argv, environment and stdin for each permissions level and model, its idle
timeout, and the account it names; bad settings are one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ralphloop.agents.opencode.backend import IDLE_TIMEOUT_S, OpencodeAgent, account
from ralphloop.config.settings import load_settings
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentRequest

PROMPT = "a long prompt\n" * 10_000


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RALPH_HOME", str(tmp_path / "ralph-home"))
    root = tmp_path / "project"
    (root / ".ralph").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def agent(project: Path, env: dict[str, str] | None = None, **flags: str) -> OpencodeAgent:
    given: dict[str, tuple[Any, str]] = {"agent": ("opencode", "--agent")}
    given.update({key: (value, f"--{key}") for key, value in flags.items()})
    given.setdefault("opencode_command", (sys.executable, "opencode.command"))
    settings = load_settings(str(project), given, env={})
    return OpencodeAgent(settings, env or {"HOME": str(project.parent / "home")})


def request(project: Path, model: str | None = None) -> AgentRequest:
    return AgentRequest(PROMPT, 3, str(project), str(project / ".ralph" / "feat"), "/p.md", "S-2", model=model)


def test_the_command_takes_the_prompt_on_stdin_and_works_in_the_project(project: Path) -> None:
    command = agent(project).command(request(project))
    assert command.argv == (
        sys.executable, "run", "--format", "json", "--print-logs", "--log-level", "ERROR",
        "--title", "ralph S-2 iteration 3",
    )  # fmt: skip
    assert command.stdin == PROMPT.encode() and PROMPT.strip() not in " ".join(command.argv)
    assert command.env["PWD"] == str(project)
    assert command.env["RALPH_TASK_ID"] == "S-2"
    assert command.idle_timeout_s == IDLE_TIMEOUT_S == 600.0


@pytest.mark.parametrize(
    ("level", "rules", "auto"),
    [
        ("ask", {"edit": {"*": "deny"}, "bash": {"*": "deny"}}, False),
        ("edits", {"edit": {"*": "allow"}, "bash": {"*": "deny"}}, False),
        ("all", {"edit": {"*": "allow"}, "bash": {"*": "allow"}}, True),
    ],
)
def test_each_permissions_level_is_opencodes_own_rules(project: Path, level: str, rules: object, auto: bool) -> None:
    command = agent(project, permissions=level).command(request(project))
    assert json.loads(command.env["OPENCODE_PERMISSION"]) == rules
    assert ("--auto" in command.argv) is auto
    assert not {"--yolo", "--dangerously-skip-permissions"} & set(command.argv)


def test_the_default_is_edits_and_never_auto(project: Path) -> None:
    command = agent(project).command(request(project))
    assert json.loads(command.env["OPENCODE_PERMISSION"])["bash"] == {"*": "deny"}
    assert "--auto" not in command.argv


def test_the_model_is_passed_as_provider_slash_model(project: Path) -> None:
    made = agent(project, model="anthropic/claude-sonnet-4-5")
    command = made.command(request(project, model="anthropic/claude-sonnet-4-5"))
    assert command.argv[-2:] == ("-m", "anthropic/claude-sonnet-4-5")


@pytest.mark.parametrize("model", ["sonnet", "/x", "anthropic/", " / "])
def test_a_model_without_its_provider_is_refused(project: Path, model: str) -> None:
    with pytest.raises(RalphError) as caught:
        agent(project, model=model)
    assert str(caught.value).startswith("--model: opencode names a model provider/model")


def test_a_missing_executable_is_told(project: Path) -> None:
    made = agent(project, opencode_command=str(project / "no-such-opencode"))
    assert made.missing is not None and "no-such-opencode" in made.missing


def test_the_account_names_the_credential_without_the_secret(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path)}
    key = "sk-ant-secret-value"
    named = account("anthropic/claude-sonnet-4-5", {**home, "ANTHROPIC_API_KEY": key})
    assert named.startswith("api-key:") and len(named) == len("api-key:") + 12 and key not in named
    assert account("openai/gpt-5", {**home, "ANTHROPIC_API_KEY": key}) == f"login:{tmp_path}/.local/share/opencode"
    assert account(None, {**home, "XDG_DATA_HOME": "/data"}) == "login:/data/opencode"
    assert account(None, {**home, "OPENAI_API_KEY": "k1"}) != account(None, {**home, "OPENAI_API_KEY": "k2"})
    assert account("local/qwen", {**home, "OPENAI_API_KEY": "k"}).startswith("login:")
