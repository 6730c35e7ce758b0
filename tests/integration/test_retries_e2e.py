"""Task retries end to end: a failed attempt is saved (a git ref and a patch), undone, and the task tried again.

Real `ralph run`, real git, real agent processes. The user's own work (an untracked file, a staged and an
unstaged change, ignored files) survives every undo; the agent's files, deletions and commits of a failed
attempt are gone from the workspace but recoverable from refs/ralph/attempts/<feature>/iteration-N and
logs/iteration-N.patch. The last attempt (retries exhausted, or max iterations) is left in place.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import AGENTS, PYTHON, RalphRunner, agent_cmd, read_json, write_prd
from tests.integration.helpers import assert_one_line_error, entry_fields, git, progress_entries

REF = "refs/ralph/attempts/feat/iteration-{}"
# Each attempt: commit one file, leave another uncommitted, then fail.
FAILING = {
    "write": {"src/feature.py": "attempt = {n}\n"},
    "commit": "wip: attempt {n}",
    "say_err": "Error: tests failed in attempt {n}",
    "exit": 1,
}
# The same, and it also writes an ignored build output and deletes a tracked file and the user's untracked one.
FAILING_AFTER = {
    **FAILING,
    "write": {"src/feature.py": "attempt = {n}\n", "scratch.txt": "scratch {n}\n", "build/out.txt": "built {n}\n"},
    "delete": ["gone.txt", "notes.txt"],
}


def steps(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def entries(feature: Path) -> list[dict[str, str]]:
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def user_work(project: Path, env: dict[str, str]) -> None:
    """The user's, before the loop starts: a staged change, an unstaged change, an untracked file."""
    for name in ("tracked.txt", "edited.txt", "gone.txt"):
        (project / name).write_text("v1\n")
    (project / ".gitignore").write_text("build/\n")
    git(project, env, "add", "tracked.txt", "edited.txt", "gone.txt", ".gitignore")
    git(project, env, "commit", "-q", "-m", "user files")
    (project / "tracked.txt").write_text("v2 staged\n")
    git(project, env, "add", "tracked.txt")
    (project / "edited.txt").write_text("v2 not staged\n")
    (project / "notes.txt").write_text("my notes\n")


def assert_user_work_kept(project: Path, env: dict[str, str]) -> None:
    assert (project / "notes.txt").read_text() == "my notes\n"
    assert (project / "tracked.txt").read_text() == "v2 staged\n"
    assert (project / "edited.txt").read_text() == "v2 not staged\n"
    assert (project / "gone.txt").read_text() == "v1\n"
    assert git(project, env, "diff", "--cached", "--name-only").split() == ["tracked.txt"]
    assert git(project, env, "diff", "--name-only").split() == ["edited.txt"]
    assert "?? notes.txt" in git(project, env, "status", "--porcelain").splitlines()


def test_a_failing_story_is_retried_from_a_clean_workspace_then_stops(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    user_work(project, ralph_env)
    head = git(project, ralph_env, "rev-parse", "HEAD").strip()
    record = tmp_path / "record.jsonl"

    done = ralph("run", "-n", "10", "--agent-cmd", steps(tmp_path, {"*": {**FAILING_AFTER, "record": str(record)}}))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "retries_exhausted"
    assert (status["retryCount"], status["maxRetries"]) == (3, 3)
    assert "MAX RETRIES EXCEEDED" in done.stdout
    assert "ralph run -s S-1" in done.stdout
    assert "ralph run -s S-1" in status["guidance"]
    assert [entry["Status"] for entry in entries(feature)] == ["failed"] * 3
    assert [entry["Story"].split(" - ")[0] for entry in entries(feature)] == ["S-1"] * 3
    assert not (feature / "logs" / "iteration-4.log").exists()
    fail_lines = [line for line in (feature / "progress.txt").read_text().splitlines() if line.startswith("[FAIL]")]
    assert len(fail_lines) == 3, fail_lines
    for attempt, line in enumerate(fail_lines, start=1):
        assert line.startswith("[FAIL] S-1 - ") and line.endswith(f"(attempt {attempt}/3)"), line
        assert f"tests failed in attempt {attempt}" in line
    # Every attempt started from the workspace as it was before the first: the previous attempt's commit and
    # files undone, the user's staged change and untracked file still there.
    starts = [json.loads(line) for line in record.read_text().splitlines()]
    assert [start["iteration"] for start in starts] == [1, 2, 3]
    assert [start["head"] for start in starts] == [head] * 3
    assert starts[1]["status"] == starts[0]["status"] == starts[2]["status"]
    assert {"M  tracked.txt", " M edited.txt", "?? notes.txt"} <= set(starts[2]["status"]), starts[2]
    assert not any("feature.py" in line or "scratch.txt" in line for line in starts[2]["status"])
    # Every attempt was saved and undone, the last one too: a failed story is never left half done (the human
    # finds it under its ref and in its patch, docs/guards.md).
    for number in (1, 2, 3):
        assert git(project, ralph_env, "show", f"{REF.format(number)}:src/feature.py") == f"attempt = {number}\n"
    refs = git(project, ralph_env, "for-each-ref", "--format=%(refname)", "refs/ralph/").split()
    assert refs == [REF.format(1), REF.format(2), REF.format(3)]
    assert not (project / "src" / "feature.py").exists()
    # The retry's prompt says the last attempt failed and was undone.
    retry_prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert "attempt at S-1 failed" in retry_prompt and "was undone" in retry_prompt, retry_prompt
    assert "this is attempt 2 of 3" in retry_prompt


def test_a_failed_attempt_is_recoverable_from_its_ref_and_patch(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    user_work(project, ralph_env)
    head = git(project, ralph_env, "rev-parse", "HEAD").strip()
    # Attempt 1 fails; iteration 2 changes nothing, so the workspace stays as the undo left it.
    plan = {"1": FAILING_AFTER, "2": {"say": "thinking"}}

    done = ralph("run", "-n", "2", "--agent-cmd", steps(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "in-progress"]
    # The workspace is back: HEAD, no agent file, the user's work kept.
    assert git(project, ralph_env, "rev-parse", "HEAD").strip() == head
    assert not (project / "src").exists()
    assert not (project / "scratch.txt").exists()
    assert_user_work_kept(project, ralph_env)
    assert (project / "build" / "out.txt").read_text() == "built 1\n"  # ignored files are not touched
    # The attempt: the ref holds the agent's files, and its own commit is the ref's parent.
    ref = REF.format(1)
    assert git(project, ralph_env, "show", f"{ref}:src/feature.py") == "attempt = 1\n"
    assert git(project, ralph_env, "show", f"{ref}:scratch.txt") == "scratch 1\n"
    agent_commit = git(project, ralph_env, "rev-parse", f"{ref}^").strip()
    assert git(project, ralph_env, "log", "-1", "--format=%s", agent_commit).strip() == "wip: attempt 1"
    assert "wip: attempt 1" in git(project, ralph_env, "log", "--format=%s", ref).splitlines()
    subprocess.run(["git", "merge-base", "--is-ancestor", head, agent_commit], cwd=project, env=ralph_env, check=True)
    note = entries(feature)[0]["Note"]
    assert ref in note and "iteration-1.patch" in note, note
    # The patch applies to the restored workspace and brings the attempt's files back.
    patch = feature / "logs" / "iteration-1.patch"
    git(project, ralph_env, "apply", "--check", str(patch))
    git(project, ralph_env, "apply", str(patch))
    assert (project / "src" / "feature.py").read_text() == "attempt = 1\n"
    assert (project / "scratch.txt").read_text() == "scratch 1\n"


def test_a_fail_signal_with_exit_0_is_retried(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    plan = {"*": {"write": {"half.txt": "half {n}\n"}, "say": "<ralph>FAIL S-1: the API schema is missing</ralph>"}}

    done = ralph("run", "-n", "10", "--agent-cmd", steps(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "retries_exhausted"
    assert "the API schema is missing" in status["exitMessage"]
    assert "MAX RETRIES EXCEEDED" in done.stdout
    assert [entry["Status"] for entry in entries(feature)] == ["failed"] * 3
    progress = (feature / "progress.txt").read_text()
    assert "(attempt 1/3)" in progress and "(attempt 2/3)" in progress
    assert "the API schema is missing" in progress
    # Every failed attempt, the last one too, was saved and undone: nothing of a failed attempt stays in place.
    assert git(project, ralph_env, "show", f"{REF.format(1)}:half.txt") == "half 1\n"
    assert git(project, ralph_env, "show", f"{REF.format(2)}:half.txt") == "half 2\n"
    assert git(project, ralph_env, "show", f"{REF.format(3)}:half.txt") == "half 3\n"
    assert not (project / "half.txt").exists()


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


def test_a_story_that_fails_once_then_passes_completes(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    write_prd(feature, 1)
    plan = {
        "1": FAILING,
        "*": {"write": {"src/feature.py": "done = True\n"}, "pass": ["S-1"], "say": "finished S-1"},
    }

    done = ralph("run", "-n", "5", "--no-archive", "--agent-cmd", steps(tmp_path, plan))

    assert done.returncode == 0, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["retryCount"]) == ("complete", 0)
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "complete"]
    assert (project / "src" / "feature.py").read_text() == "done = True\n"
    assert "wip: attempt 1" not in git(project, ralph_env, "log", "--format=%s", "HEAD")
    assert git(project, ralph_env, "show", f"{REF.format(1)}:src/feature.py") == "attempt = 1\n"


def test_story_flag_works_on_that_story_only(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    plan = {"*": {"write": {"work-{n}.txt": "work\n"}, "pass": ["S-2"], "say": "finished"}}
    record = tmp_path / "env.jsonl"
    steps(tmp_path, plan)
    cmd = agent_cmd("record_env.py", str(record), PYTHON, str(AGENTS / "step_agent.py"), str(tmp_path / "plan.json"))

    done = ralph("run", "-s", "S-2", "-n", "5", "--no-archive", "--agent-cmd", cmd)

    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "story_done"
    tasks = [json.loads(line)["env"]["RALPH_TASK_ID"] for line in record.read_text().splitlines()]
    assert tasks == ["S-2"]
    stories = {story["id"]: story["passes"] for story in read_json(feature / "prd.json")["userStories"]}
    assert stories == {"S-1": False, "S-2": True, "S-3": False}


def test_story_flag_with_an_unknown_id_is_a_one_line_error(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    done = ralph("run", "--story", "S-99", "--agent-cmd", steps(tmp_path, {}))

    line = assert_one_line_error(done, "S-99")
    assert "S-1" in line  # the stories there are
    assert not (feature / "logs").exists()
    assert not (feature / "status.json").exists()
