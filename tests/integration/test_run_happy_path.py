"""`ralph run` over three stories with an agent that finishes one story per iteration."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.conftest import AGENTS, PYTHON, agent_cmd, read_json
from tests.integration.helpers import entry_fields, entry_files, git, progress_entries

SEED_STATUS_KEYS = {
    "iteration",
    "maxIterations",
    "status",
    "feature",
    "storiesComplete",
    "storiesTotal",
    "apiCallsUsed",
    "apiCallsLimit",
    "rateLimitResetsAt",
    "startedAt",
    "lastUpdated",
}
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
ARCHIVE_NAME = re.compile(r"^\d{8}-\d{6}-feat(-\d+)?$")


def _story_agent(tmp_path: Path) -> tuple[str, Path, Path]:
    """The story agent behind a recorder of its stdin and environment; returns (cmd, env record, agent record)."""
    env_record, record = tmp_path / "env.jsonl", tmp_path / "record.jsonl"
    cmd = agent_cmd("record_env.py", str(env_record), PYTHON, str(AGENTS / "story_agent.py"), "--record", str(record))
    return cmd, env_record, record


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_three_stories_run_to_completion(project, feature, ralph, ralph_env, tmp_path):
    cmd, _, record = _story_agent(tmp_path)

    done = ralph("run", "--agent-cmd", cmd)

    assert done.returncode == 0, done.stdout + done.stderr
    # Seed 003: on completion the feature folder moves to .ralph/archive/<timestamp>-<feature>/, whole.
    assert not feature.exists()
    archives = list((project / ".ralph" / "archive").iterdir())
    assert len(archives) == 1
    assert ARCHIVE_NAME.match(archives[0].name), archives[0].name
    feature = archives[0]  # the records below are read where they are now
    prd = read_json(feature / "prd.json")
    assert [story["passes"] for story in prd["userStories"]] == [True, True, True]
    for n in (1, 2, 3):
        assert (project / f"work-S-{n}.txt").read_text() == f"done S-{n}\n"

    # Three iterations, one per story, in priority order.
    runs = _lines(record)
    assert [(run["iteration"], run["task"]) for run in runs] == [(1, "S-1"), (2, "S-2"), (3, "S-3")]
    logs = feature / "logs"
    for n in (1, 2, 3):
        assert (logs / f"iteration-{n}.log").is_file()
    assert not (logs / "iteration-4.log").exists()

    # progress.txt: three entries in the seed format, each naming its commit.
    subjects = dict(
        reversed(line.split(" ", 1)) for line in git(project, ralph_env, "log", "--format=%H %s").splitlines()
    )
    entries = progress_entries((feature / "progress.txt").read_text())
    assert len(entries) == 3, entries
    for n, entry in enumerate(entries, start=1):
        fields = entry_fields(entry)
        assert fields["Iteration"] == str(n)
        assert ISO_DATE.match(fields["Date"]), fields["Date"]
        assert fields["Story"] == f"S-{n} - Story {n}"
        assert fields["Status"] == "complete"
        assert f"work-S-{n}.txt" in entry_files(entry)
        commit = fields["Commit"]
        assert re.fullmatch(r"[0-9a-f]{7,40}", commit), commit
        assert subjects[f"feat: S-{n}"].startswith(commit)

    status = read_json(feature / "status.json")
    assert status.keys() >= SEED_STATUS_KEYS
    assert status["status"] == "complete"
    assert status["exitReason"] == "complete"
    assert status["storiesComplete"] == 3
    assert status["storiesTotal"] == 3
    assert status["feature"] == "feat"
    assert status["iteration"] == 3
    assert status["apiCallsUsed"] == 3
    assert isinstance(status["apiCallsLimit"], int)
    assert ISO_DATE.match(status["startedAt"])
    assert ISO_DATE.match(status["lastUpdated"])

    state = read_json(feature / "state.json")
    assert isinstance(state["schema_version"], int)


def test_agent_gets_prompt_on_stdin_and_ralph_environment(project, feature, ralph, tmp_path):
    cmd, env_record, record = _story_agent(tmp_path)

    done = ralph("run", "--no-archive", "--agent-cmd", cmd)

    assert done.returncode == 0, done.stdout + done.stderr
    seen = _lines(env_record)
    assert len(seen) == 3
    for n, call in enumerate(seen, start=1):
        env = call["env"]
        assert isinstance(env, dict)
        assert env["RALPH_ITERATION"] == str(n)
        assert env["RALPH_TASK_ID"] == f"S-{n}"
        feature_dir = env["RALPH_FEATURE_DIR"]
        assert os.path.isabs(feature_dir), feature_dir
        assert os.path.samefile(feature_dir, feature)
        prompt_file = Path(env["RALPH_PROMPT_FILE"])
        assert os.path.samefile(prompt_file, feature / "logs" / f"iteration-{n}.prompt.md")
        # The prompt on stdin is the one saved for this iteration, and it is about this story.
        assert call["prompt"] == prompt_file.read_text()
        assert f"S-{n} - Story {n}" in call["prompt"]
        assert f"criterion {n}" in call["prompt"]
        assert os.path.samefile(call["cwd"], project)
    for n, run in enumerate(_lines(record), start=1):
        assert run["prompt_bytes"] == (feature / "logs" / f"iteration-{n}.prompt.md").stat().st_size


def test_no_archive_flag_makes_no_archive(project, feature, ralph):
    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "complete"
    archive = project / ".ralph" / "archive"
    assert not archive.exists() or not any(archive.iterdir())
