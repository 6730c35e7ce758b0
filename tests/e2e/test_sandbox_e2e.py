"""The real agent CLIs inside ralph's sandbox (issue 35): Claude Code against its loopback fake API, reached through
ralph's filtering proxy in the run's network (the API's host allowed, nothing else); its tool really runs in the
box and its work is committed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ralphloop.processes.sandbox import cannot_start
from tests.conftest import RalphRunner, read_json
from tests.e2e.conftest import codex_env
from tests.e2e.fake_anthropic import FakeAnthropic, Text, bash
from tests.e2e.fake_openai import FAKE_KEY_VARIABLE, FakeOpenAI, Message, shell
from tests.e2e.test_ralph_claude import both_envs, entries, finish_story, metrics, run, use_claude
from tests.e2e.test_ralph_codex import MODEL, finish_all_stories, use_codex

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or cannot_start(shutil.which("bwrap") or "bwrap") is not None,
    reason="bubblewrap cannot run here (scripts/setup.sh installs it when run as root)",
)


@pytest.fixture
def env(tmp_path: Path, fake_api: FakeAnthropic, ralph_env: dict[str, str]) -> dict[str, str]:
    return both_envs(tmp_path, fake_api, ralph_env, oauth=False)


def test_claude_code_does_a_story_inside_the_sandbox_through_the_proxy(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    use_claude(project, claude_bin)
    fake_api.add_turns(bash(finish_story("S-1"), text="Doing S-1."), Text("S-1 is done."))

    done = run(ralph, env, "--sandbox", "bwrap", "-n", "1")

    assert done.returncode == 1, done.stdout + done.stderr  # -n 1 reached, two stories open
    assert (project / "S-1.txt").exists()
    assert [entry["Status"] for entry in entries(feature)] == ["complete"]
    assert metrics(feature)[0]["outcome"] == "complete"
    assert read_json(feature / "status.json")["storiesComplete"] == 1
    assert "blocked:" not in done.stdout


def test_with_no_network_the_same_claude_code_cannot_reach_its_api(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], fake_api: FakeAnthropic, claude_bin: str
) -> None:
    """The box is real: with `sandbox.network: none` the loopback API on the machine is out of reach."""
    use_claude(project, claude_bin, extra="sandbox:\n  network: none\n")
    fake_api.add_turns(bash(finish_story("S-1")), Text("S-1 is done."))

    done = run(ralph, env, "--sandbox", "bwrap", "-n", "1")

    assert not (project / "S-1.txt").exists()
    assert fake_api.main_requests == []
    assert "api-error" in [entry["Status"] for entry in entries(feature)] or done.returncode != 0, done.stdout


def test_codex_does_a_story_inside_the_sandbox_with_its_own_sandbox_off(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str], codex_bin: str
) -> None:
    """Codex's own sandbox (bubblewrap too) would nest in ralph's: inside ralph's box it runs with `-s
    danger-full-access`, ralph's box holding it; its command really runs, and its session file (in the box's home)
    is read."""
    use_codex(project, codex_bin)
    with FakeOpenAI() as openai:
        # its provider is config.toml's, with its key in a variable config.toml names: the user lets both in
        host = openai.url.split("//", 1)[1].split("/", 1)[0]
        config = project / ".ralph" / "config.yaml"
        config.write_text(config.read_text() + f"sandbox:\n  allow_hosts: ['{host}']\n  env: [{FAKE_KEY_VARIABLE}]\n")
        openai.add_turns(shell(finish_all_stories()), Message("All stories pass. <promise>COMPLETE</promise>"))
        env = codex_env(tmp_path / "codex-home", openai, ralph_env, MODEL)
        done = ralph(
            "run", "-f", "feat", "--no-archive", "--agent", "codex", "--sandbox", "bwrap", env=env, timeout=300
        )
        launched = openai.main_requests
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "work.txt").read_text() == "done\n" and len(launched) == 2
    line = json.loads((feature / "ralph_metrics.jsonl").read_text().splitlines()[0])
    assert line["model"] == MODEL  # read from the session file Codex wrote in the box's home
    log = (feature / "logs" / "iteration-1.log").read_text()
    assert "command_execution" in log
