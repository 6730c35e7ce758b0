"""The prompt carries only the newest slice of a large progress.txt, and points at the full file."""

from __future__ import annotations

import json

from tests.conftest import agent_cmd

ENTRY_COUNT = 400
LIMIT = 24 * 1024  # config default progress_bytes (16 KB) + the template, with room to spare


def _big_progress() -> str:
    parts = ["# Progress Log: feat\n# Started: 2026-01-01T00:00:00Z\n"]
    for n in range(ENTRY_COUNT):
        parts.append(
            f"\n---\nIteration: {n + 1}\nDate: 2026-01-01T00:00:00Z\nStory: S-1 - Story 1\nStatus: failed\n"
            f"Files Changed: (none)\nCommit: (none)\nNote: marker-{n:05d} {'x' * 400}\n"
        )
    return "".join(parts)


def test_prompt_stays_small_with_a_large_progress_log(project, feature, ralph, tmp_path):
    progress = feature / "progress.txt"
    progress.write_text(_big_progress())
    assert progress.stat().st_size > 180 * 1024
    # A template without placeholders: any mention of progress.txt comes from the bounded section.
    template = project / "plain-prompt.md"
    template.write_text("Do the current story.\n")
    record = tmp_path / "record.jsonl"

    done = ralph(
        "run", "-n", "1", "-p", str(template), "--agent-cmd", agent_cmd("story_agent.py", "--record", str(record))
    )

    assert done.returncode == 1, done.stdout + done.stderr  # one story of three done: the limit stops it
    (run,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert run["prompt_bytes"] < LIMIT, run["prompt_bytes"]
    prompt = (feature / "logs" / "iteration-1.prompt.md").read_text()
    assert len(prompt.encode()) == run["prompt_bytes"]
    assert f"marker-{ENTRY_COUNT - 1:05d}" in prompt  # the newest entry
    assert "marker-00000" not in prompt  # the oldest one
    assert ".ralph/feat/progress.txt" in prompt
    assert "S-1 - Story 1" in prompt
    # Entries are cut whole: every shown marker line is complete.
    shown = [line for line in prompt.splitlines() if "marker-" in line]
    assert shown
    assert all(line.endswith("x" * 400) and line.startswith("Note: marker-") for line in shown)
    assert progress.read_text().startswith(_big_progress())  # the log itself is never truncated


def test_small_progress_log_is_included_whole(project, feature, ralph, tmp_path):
    cmd = agent_cmd("say.py", "nothing")
    assert ralph("run", "-n", "2", "--agent-cmd", cmd).returncode == 1

    prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()

    assert "Iteration: 1" in prompt  # the first iteration's entry is fed to the second
