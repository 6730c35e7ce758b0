"""The other real agent CLIs inside ralph's sandbox (issue 35), as test_sandbox_e2e.py does Claude Code and Codex:
Gemini CLI, opencode, Copilot CLI and aider each do a story against their loopback fake API, reached through ralph's
filtering proxy in the run's network (what their backend declares lets it through, nothing else does); their tools
really run in the box, and their work is committed. Amp's thread runs on Amp's own server, which no fake here
speaks: its CLI is shown to reach its server from the box with its key, and to stop at the server's refusal.

Each test uses the CLI's own end-to-end helpers (its install, its fake, its private home) and adds `--sandbox bwrap`
only: the box's home is seeded from that private home with the files the backend names.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ralphloop.processes.sandbox import cannot_start
from tests.conftest import RalphRunner, read_json
from tests.e2e import test_amp_cli, test_ralph_aider, test_ralph_copilot, test_ralph_gemini, test_ralph_opencode
from tests.e2e.aider_cli import aider_env
from tests.e2e.fake_gemini import FunctionCall, Text
from tests.e2e.fake_openai_chat import FAKE_API_KEY, FakeOpenAIChat, Message, tool_call
from tests.e2e.opencode_cli import FAKE_KEY_VARIABLE, MODEL, opencode_config, opencode_env
from tests.e2e.test_amp_cli import amp_env
from tests.e2e.test_ralph_aider import finish_every_story, use_aider
from tests.e2e.test_ralph_copilot import copilot_env, mark_all_stories, use_copilot
from tests.e2e.test_ralph_gemini import all_stories_passing, gemini_env, use_gemini
from tests.e2e.test_ralph_opencode import use_opencode

# each CLI's fixtures of its own tests: its install (once), its fake
gemini_bin = test_ralph_gemini.gemini_bin
gemini_api = test_ralph_gemini.gemini_api
opencode_bin = test_ralph_opencode.opencode_bin
copilot_bin = test_ralph_copilot.copilot_bin
aider_bin = test_ralph_aider.aider_bin
amp_bin = test_amp_cli.amp_bin
amp_server = test_amp_cli.amp_server

pytestmark = [
    pytest.mark.skipif(
        shutil.which("bwrap") is None or cannot_start(shutil.which("bwrap") or "bwrap") is not None,
        reason="bubblewrap cannot run here (scripts/setup.sh installs it when run as root)",
    ),
    pytest.mark.timeout(1800),  # the first test of a CLI may pay for its install (aider's from PyPI: minutes)
]


def run(ralph: RalphRunner, env: dict[str, str], agent: str, *args: str) -> tuple[str, int]:
    done = ralph(
        "run", "-f", "feat", "--no-archive", "--agent", agent, "--sandbox", "bwrap", *args, env=env, timeout=600
    )
    return done.stdout + done.stderr, done.returncode


def committed(feature: Path) -> None:
    """The story's work is there and accepted: every story passes, and ralph's line says nothing was blocked."""
    assert all(story["passes"] for story in read_json(feature / "prd.json")["userStories"])
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "complete", status


def test_gemini_cli_does_a_story_inside_the_sandbox_through_the_proxy(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str], gemini_api, gemini_bin
) -> None:
    """Its key and GOOGLE_GEMINI_BASE_URL reach it, its settings.json is copied into the box's home (API-key auth:
    without it the CLI would not know how to log in), and its session file is read there."""
    use_gemini(project, gemini_bin)
    gemini_api.add_turns(
        FunctionCall("write_file", {"file_path": "work.txt", "content": "done\n"}),
        FunctionCall("write_file", {"file_path": ".ralph/feat/prd.json", "content": all_stories_passing(feature)}),
        Text("All stories pass. <promise>COMPLETE</promise>"),
    )
    said, code = run(ralph, gemini_env(tmp_path, gemini_api, ralph_env), "gemini", "--model", "gemini-2.5-pro")

    assert code == 0, said
    assert (project / "work.txt").read_text() == "done\n"
    committed(feature)
    assert len(gemini_api.main_requests) == 3 and "blocked:" not in said
    line = json.loads((feature / "ralph_metrics.jsonl").read_text().splitlines()[0])
    assert line["cost_usd"]  # priced per request from the session file the CLI wrote in the box's home


def test_opencode_does_a_story_inside_the_sandbox_through_the_proxy(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str], opencode_bin: str
) -> None:
    """Its opencode.json (under XDG_CONFIG_HOME) is copied into the box's home; the provider it names, and the
    variable its key is in, are the user's to let in, as for Codex's config.toml; its database is read in the box's
    home (the model ralph reports)."""
    use_opencode(project, opencode_bin)
    prd = feature / "prd.json"
    with FakeOpenAIChat(models=(MODEL,)) as chat_api:
        host = chat_api.url.split("//", 1)[1].split("/", 1)[0]
        config = project / ".ralph" / "config.yaml"
        config.write_text(config.read_text() + f"sandbox:\n  allow_hosts: ['{host}']\n  env: [{FAKE_KEY_VARIABLE}]\n")
        chat_api.add_turns(
            tool_call("write", {"filePath": str(project / "work.txt"), "content": "done\n"}),
            tool_call("read", {"filePath": str(prd)}),
            tool_call("write", {"filePath": str(prd), "content": all_stories_passing(feature)}),
            Message("All stories pass. <promise>COMPLETE</promise>"),
        )
        env = opencode_env(tmp_path / "opencode-home", opencode_config(chat_api), ralph_env)
        said, code = run(ralph, env, "opencode")
        requests = chat_api.main_requests

    assert code == 0, said
    assert (project / "work.txt").read_text() == "done\n"
    committed(feature)
    assert len(requests) == 4 and requests[0].headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    assert "blocked:" not in said
    line = json.loads((feature / "ralph_metrics.jsonl").read_text().splitlines()[0])
    assert line["model"] == f"fake/{MODEL}"  # from opencode's database in the box's home


def test_copilot_cli_does_a_story_inside_the_sandbox_through_the_proxy(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, copilot_bin: str
) -> None:
    """Its custom provider's address and key reach it (no GitHub login); its bundle, unpacked beside the install
    outside the box, is unpacked again in the box's home (COPILOT_CACHE_HOME does not reach it)."""
    use_copilot(project, copilot_bin)
    with FakeOpenAIChat() as chat_api:
        chat_api.add_turns(
            tool_call("create", {"path": str(project / "work.txt"), "file_text": "done\n"}),
            mark_all_stories(feature / "prd.json"),
            Message("All stories pass. <promise>COMPLETE</promise>"),
        )
        said, code = run(ralph, copilot_env(tmp_path, chat_api), "copilot", "--model", "gpt-4.1")
        requests = chat_api.main_requests

    assert code == 0, said
    assert (project / "work.txt").read_text() == "done\n"
    committed(feature)
    assert len(requests) == 3 and requests[0].headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    assert "blocked:" not in said


def test_aider_does_a_story_inside_the_sandbox_through_the_proxy(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str], aider_bin: str
) -> None:
    """OPENAI_API_BASE and the key reach it; its model metadata (a settings file of its home) is copied into the
    box's home, so it looks the model up there and downloads no model table."""
    use_aider(project, aider_bin)
    # aider asks `git config user.name` and, with no answer, writes one into .git/config, which the box keeps
    # read-only (it crashed): the box gives the user's identity through GIT_CONFIG_COUNT too. The repository names
    # none here; the user's global config does (tests/conftest.py's).
    with FakeOpenAIChat(models=("gpt-4o",)) as chat_api:
        env = aider_env(ralph_env, tmp_path / "aider-home", chat_api)
        info = {"max_input_tokens": 128000, "max_output_tokens": 16384, "litellm_provider": "openai", "mode": "chat"}
        info |= {"input_cost_per_token": 2.5e-06, "output_cost_per_token": 1e-05}
        metadata = dict.fromkeys(("gpt-4o", "openai/gpt-4o", "gpt-4o-mini", "openai/gpt-4o-mini"), info)
        (tmp_path / "aider-home" / ".aider.model.metadata.json").write_text(json.dumps(metadata))
        chat_api.add_turns(finish_every_story(feature))
        said, code = run(ralph, env, "aider", "--model", "openai/gpt-4o")
        requests = chat_api.main_requests

    assert code == 0, said
    assert (project / "work.txt").read_text() == "done\n"
    committed(feature)
    assert len(requests) == 1 and requests[0].headers["authorization"] == f"Bearer {FAKE_API_KEY}"
    assert "blocked:" not in said


def test_amp_reaches_its_server_from_the_sandbox_with_its_key(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, amp_bin: str, amp_server
) -> None:
    """AMP_URL and AMP_API_KEY reach it and its server is let through: the server sees ralph's key, and its 401 is
    the stop with the fix, as outside the box."""
    url, seen = amp_server
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"\namp:\n  command: {json.dumps(amp_bin)}\n")
    said, code = run(ralph, amp_env(tmp_path / "home", url), "amp")

    assert code == 1, said
    assert "amp login" in said and "blocked:" not in said
    assert ("POST", "/api/internal?getUserInfo", True) in seen  # its request, with the key, came through the proxy
    assert read_json(feature / "status.json")["exitReason"] == "agent_error"
