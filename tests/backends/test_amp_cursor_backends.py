"""The amp and cursor backends' commands and accounts, built from ralph's own settings (load_settings)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ralphloop.agents.accounts import account_of
from ralphloop.agents.amp.backend import AmpAgent
from ralphloop.agents.cursor.backend import CursorAgent
from ralphloop.config.settings import Settings, load_settings
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentRequest

PROMPT = "# Iteration 1\nThe secret plan: " + "x" * 2000 + "\n"


def settings(tmp_path: Path, **env: str) -> Settings:
    return load_settings(str(tmp_path), {}, env={"RALPH_HOME": str(tmp_path / "home"), **env})


def request(tmp_path: Path, model: str | None = None) -> AgentRequest:
    return AgentRequest(
        prompt=PROMPT,
        iteration=1,
        project_root=str(tmp_path),
        feature_dir=str(tmp_path / ".ralph" / "feat"),
        prompt_file=str(tmp_path / ".ralph" / "feat" / "logs" / "iteration-1.prompt.md"),
        task_id="S-1",
        model=model,
    )


def test_amp_gets_the_prompt_on_stdin_and_the_model_as_its_mode(tmp_path: Path) -> None:
    agent = AmpAgent(settings(tmp_path, RALPH_AMP_COMMAND="/bin/true"))
    command = agent.command(request(tmp_path, model="high"))
    assert command.argv == ("/bin/true", "-x", "--stream-json", "--no-ide", "--mode", "high")
    assert command.stdin == PROMPT.encode()
    everything = AmpAgent(settings(tmp_path, RALPH_AMP_COMMAND="/bin/true", RALPH_PERMISSIONS="all"))
    assert everything.command(request(tmp_path)).argv[-1] == "--dangerously-allow-all"


def test_amp_refuses_ask_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(RalphError, match="Amp cannot run with permissions: ask"):
        AmpAgent(settings(tmp_path, RALPH_AMP_COMMAND="/bin/true", RALPH_PERMISSIONS="ask"))


def test_amp_not_installed_is_said_not_raised(tmp_path: Path) -> None:
    agent = AmpAgent(settings(tmp_path, RALPH_AMP_COMMAND=str(tmp_path / "nope")))
    assert agent.missing is not None and agent.missing.startswith("$RALPH_AMP_COMMAND: ")


def test_cursor_gets_a_short_argument_naming_the_prompt_file_never_the_prompt(tmp_path: Path) -> None:
    req = request(tmp_path, model="sonnet-4")
    for permissions, flags in (("edits", ()), ("all", ("--force",)), ("ask", ("--mode", "ask"))):
        agent = CursorAgent(settings(tmp_path, RALPH_CURSOR_COMMAND="/bin/true", RALPH_PERMISSIONS=permissions))
        command = agent.command(req)
        assert command.argv[:5] == ("/bin/true", "-p", "--output-format", "stream-json", "--trust")
        assert command.argv[5:-1] == ("--model", "sonnet-4", *flags)
        assert req.prompt_file in command.argv[-1] and "secret plan" not in " ".join(command.argv)
        assert len(command.argv[-1]) < 400 and command.stdin == b""


def test_the_account_is_a_keys_short_hash_or_the_login_folder_never_the_key() -> None:
    key = "sgamp_user_0123456789abcdef"
    named = account_of({"AMP_API_KEY": key}, ("AMP_API_KEY",), "/home/u/.local/share/amp")
    assert named == "api-key:" + hashlib.sha256(key.encode()).hexdigest()[:12] and key not in named
    assert account_of({"AMP_API_KEY": "  "}, ("AMP_API_KEY",), "/l") == "login:/l"
    second = account_of({"CURSOR_AUTH_TOKEN": "t"}, ("CURSOR_API_KEY", "CURSOR_AUTH_TOKEN"), "/l")
    assert second.startswith("api-key:")


def test_each_agent_names_its_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMP_API_KEY", raising=False)
    monkeypatch.delenv("CURSOR_API_KEY", raising=False)
    monkeypatch.delenv("CURSOR_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    amp = AmpAgent(settings(tmp_path, RALPH_AMP_COMMAND="/bin/true"))
    cursor = CursorAgent(settings(tmp_path, RALPH_CURSOR_COMMAND="/bin/true"))
    assert amp.account == f"login:{tmp_path / 'data' / 'amp'}"
    assert cursor.account == f"login:{tmp_path / '.cursor'}"
    monkeypatch.setenv("CURSOR_API_KEY", "key_abc")
    assert CursorAgent(settings(tmp_path, RALPH_CURSOR_COMMAND="/bin/true")).account.startswith("api-key:")
