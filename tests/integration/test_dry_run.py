"""--dry-run prints the prompt and the agent command, and starts, writes and counts nothing."""

from __future__ import annotations

from tests.conftest import agent_cmd
from tests.integration.helpers import snapshot


def test_dry_run_prints_prompt_and_command_and_changes_nothing(project, feature, ralph, tmp_path):
    record = tmp_path / "record.jsonl"
    before = snapshot(project)
    progress_before = (feature / "progress.txt").read_bytes()

    done = ralph("run", "--dry-run", "--agent-cmd", agent_cmd("story_agent.py", "--record", str(record)))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "S-1" in done.stdout
    assert "Story 1" in done.stdout
    assert "criterion 1" in done.stdout
    assert "story_agent.py" in done.stdout
    assert str(record) in done.stdout
    assert "S-2" not in done.stdout  # only the next story's prompt
    assert not record.exists(), "the agent was run"
    assert snapshot(project) == before
    assert not (feature / "logs").exists()
    assert not (feature / "status.json").exists()
    assert not (feature / "state.json").exists()
    assert not (feature / ".lock").exists()
    assert (feature / "progress.txt").read_bytes() == progress_before


def test_dry_run_after_a_run_changes_nothing_either(project, feature, ralph, tmp_path):
    assert ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi")).returncode == 1
    record = tmp_path / "record.jsonl"
    before = snapshot(project)

    done = ralph("run", "--dry-run", "--agent-cmd", agent_cmd("story_agent.py", "--record", str(record)))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "S-1" in done.stdout
    assert not record.exists()
    assert snapshot(project) == before


def test_dry_run_with_a_custom_prompt_file(project, feature, ralph):
    template = project / "my-prompt.md"
    template.write_text("CUSTOM-TEMPLATE-MARKER for {{feature}}\n")

    done = ralph("run", "--dry-run", "-p", str(template), "--agent-cmd", agent_cmd("say.py"))

    assert done.returncode == 0, done.stderr
    assert "CUSTOM-TEMPLATE-MARKER for feat" in done.stdout
    assert "S-1" in done.stdout
