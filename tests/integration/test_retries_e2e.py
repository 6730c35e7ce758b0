"""Task retries at the CLI's edge: real `ralph run`, real git, real agent processes.

What a retry decides and records (the failed attempt saved, undone and tried again, the user's work kept, the
prompt told) is tests/engine/test_retries.py's, in-process. Here: the hint printed when retries run out works when
pasted (and the CLI's exit codes follow the run's end), and an unknown story is one error line.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import assert_one_line_error, entry_fields, git, progress_entries


def steps(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def test_the_hint_after_max_retries_works(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    fail = {"say_err": "Error: the schema is missing", "exit": 1}
    plan = {"1": fail, "2": fail, "3": fail, "*": {"write": {"schema.sql": "create table t;\n"}, "pass": ["S-1"]}}
    cmd = steps(tmp_path, plan)
    first = ralph("run", "-n", "10", "--agent-cmd", cmd)
    assert first.returncode == 1, first.stdout + first.stderr
    assert read_json(feature / "status.json")["exitReason"] == "retries_exhausted"

    hint = next(line for line in first.stdout.splitlines() if "then run: " in line).split("then run: ")[1]
    assert hint == shlex.join(["ralph", "run", "-s", "S-1", "-n", "10", "--agent-cmd", cmd, "-f", "feat"])
    assert "(ralph logs -f feat)" in first.stdout and "git for-each-ref refs/ralph/attempts/" in first.stdout
    logs = ralph("logs", "-f", "feat")  # what the agent did, as the hint says to read it
    assert logs.returncode == 0 and "Error: the schema is missing" in logs.stdout, logs.stdout + logs.stderr
    git(project, ralph_env, "for-each-ref", "refs/ralph/attempts/")  # works as printed (these attempts wrote nothing)
    done = ralph(*shlex.split(hint)[1:], "--no-archive")  # the hint, pasted: the same agent, the same limit

    assert done.returncode == 0, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["retryCount"]) == ("story_done", 0)  # S-1 done; S-2 and S-3 still open
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "failed", "failed", "complete"]


def test_story_flag_with_an_unknown_id_is_a_one_line_error(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    done = ralph("run", "--story", "S-99", "--agent-cmd", steps(tmp_path, {}))

    line = assert_one_line_error(done, "S-99")
    assert "S-1" in line  # the stories there are
    assert not (feature / "logs").exists()
    assert not (feature / "status.json").exists()
