"""Every report ralph makes is true (the engine issue's nine cases), through the real `ralph` CLI with real agent
processes in real git repositories: rejected work is never committed nor counted a success, a failed last attempt
leaves the task file as it was, a one-story run says what it finished, the numbers agree on every surface, a reset
circuit shows at once, churn trips the breaker, and a stop that needs the user shows what the agent last said."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import AGENTS, PYTHON, RalphRunner, agent_cmd, read_json, write_prd
from tests.integration.test_analysis_blocked import BLOCKED


def git(project: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=project, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def prepared(project: Path, env: dict[str, str], ralph: RalphRunner, stories: int = 3, config: str = "") -> Path:
    """.ralph/feat with `stories` open stories and `config` in .ralph/config.yaml, all committed."""
    assert ralph("init", "feat").returncode == 0
    folder = project / ".ralph" / "feat"
    write_prd(folder, stories)
    if config:
        (project / ".ralph" / "config.yaml").write_text(config)
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "plan")
    return folder


def plan(tmp_path: Path, steps: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(steps))
    return agent_cmd("step_agent.py", str(path))


def passing(folder: Path) -> list[str]:
    return [story["id"] for story in read_json(folder / "prd.json")["userStories"] if story["passes"]]


def metrics(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "ralph_metrics.jsonl").read_text().splitlines()]


def fake_claude(tmp_path: Path, model: str) -> str:
    """A `claude` that finishes the story it is given, and says `model` answered (tests/agents/fake_claude.py)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    config = folder / "fake_claude.json"
    config.write_text(json.dumps({"model": model, "cost": 0.25, "work": True, "calls": str(tmp_path / "calls.jsonl")}))
    executable = folder / "claude"
    executable.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "fake_claude.py"}" "{config}" "$@"\n')
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    return str(executable)


# ---------------------------------------------------------------- 1. rejected work: never committed, never a success


def test_work_of_the_wrong_model_is_undone_never_committed_and_never_counted_a_success(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    claude = fake_claude(tmp_path, "claude-sonnet-4-5-20250929")
    config = (
        f"agent: claude\nclaude:\n  command: {claude}\nbackoff:\n  initial_seconds: 0\n  attempts: 1\n"
        "git:\n  auto_commit: true\n"
    )
    folder = prepared(project, ralph_env, ralph, config=config)
    head = git(project, ralph_env, "rev-parse", "HEAD")

    done = ralph("run", "-f", "feat", "--model", "opus", "-n", "3")

    assert done.returncode == 1, done.stdout + done.stderr
    assert "model_mismatch" in done.stdout
    assert "committed" not in done.stdout and "✓ S-1" not in done.stdout
    assert git(project, ralph_env, "rev-parse", "HEAD") == head  # nothing committed, by ralph or anyone
    assert passing(folder) == []  # the wrong model's work was undone, its story mark with it
    assert not (project / "work-S-1.txt").exists()
    lines = metrics(folder)
    assert len(lines) == 2  # the first try and the one retry the backoff allows
    assert all(line["success"] is False and line["counted"] is False for line in lines)
    assert all(line["outcome"] == "failed" for line in lines)
    report = json.loads(ralph("report", "-f", "feat", "--json").stdout)["summary"]
    assert (report["iterations"], report["successes"], report["calls_not_counted"]) == (0, 0, 2)
    status = json.loads(ralph("status", "-f", "feat", "--json").stdout)
    assert (status["storiesComplete"], status["iterationsCounted"], status["callsNotCounted"]) == (0, 0, 2)
    assert "Summary: 0 iterations (+2 calls not counted) · 0 advanced" in done.stdout


def test_a_refused_completion_claim_is_not_committed_nor_a_success(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, config="git:\n  auto_commit: true\n")
    head = git(project, ralph_env, "rev-parse", "HEAD")
    cmd = plan(tmp_path, {"1": {"write": {"a.txt": "a\n"}, "pass": ["S-1"], "say": "<promise>COMPLETE</promise>"}})

    done = ralph("run", "-f", "feat", "-n", "1", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "completion claim refused" in done.stdout
    assert git(project, ralph_env, "rev-parse", "HEAD") == head
    assert (project / "a.txt").exists()  # the work is kept, uncommitted: a refused claim is not a failed attempt
    [line] = metrics(folder)
    assert (line["outcome"], line["success"], line["counted"]) == ("refused", False, True)
    assert "Success Rate:    0%" in done.stdout


# ---------------------------------------------------------------- 2. a failed last attempt: the task file as it was


def test_a_crash_after_setting_passes_on_the_last_allowed_iteration_is_undone(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    before = (folder / "prd.json").read_bytes()
    cmd = plan(tmp_path, {"1": {"write": {"half.txt": "x\n"}, "pass": ["S-1"], "exit": 3}})

    done = ralph("run", "-f", "feat", "-n", "1", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "max_iterations" in done.stdout
    assert (folder / "prd.json").read_bytes() == before  # S-1 is not left passing
    assert not (project / "half.txt").exists()
    assert git(project, ralph_env, "for-each-ref", "refs/ralph/attempts/")  # saved before it was undone
    status = json.loads(ralph("status", "-f", "feat", "--json").stdout)
    assert status["storiesComplete"] == 0
    [line] = metrics(folder)
    assert (line["outcome"], line["success"]) == ("failed", False)


def test_a_story_whose_last_attempt_fails_its_gate_is_not_left_passing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    config = "max_retries: 2\nquality_checks:\n  tests: exit 1\n"
    folder = prepared(project, ralph_env, ralph, config=config)
    cmd = plan(tmp_path, {"*": {"write": {"s1.txt": "{n}\n"}, "pass": ["S-1"]}})

    done = ralph("run", "-f", "feat", "-n", "5", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "retries_exhausted" in done.stdout
    assert passing(folder) == []
    assert "Stories:    0 / 3 pass" in ralph("status", "-f", "feat").stdout
    assert [line["success"] for line in metrics(folder)] == [False, False]


# ---------------------------------------------------------------- 3. -s ID: that story done, not the feature


def test_a_one_story_run_says_that_story_is_done_and_neither_completes_nor_archives_the_feature(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    folder = prepared(project, ralph_env, ralph)

    done = ralph("run", "-f", "feat", "-s", "S-2", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ STORY S-2 done (story S-2 done; 2 other tasks still open)" in done.stdout
    assert "ALL COMPLETE" not in done.stdout
    assert passing(folder) == ["S-2"]
    status = json.loads(ralph("status", "-f", "feat", "--json").stdout)
    assert (status["status"], status["exitReason"]) == ("story_done", "story_done")
    assert not (project / ".ralph" / "archive").exists()


def test_resume_from_a_story_says_which_stories_it_finished(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    prepared(project, ralph_env, ralph)

    done = ralph("run", "-f", "feat", "--resume-from", "S-2", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ STORIES from S-2 on done (stories from S-2 on done; 1 other task still open)" in done.stdout
    assert "ALL COMPLETE" not in done.stdout
    assert not (project / ".ralph" / "archive").exists()


def test_a_one_story_run_that_finishes_the_last_open_story_completes_the_feature(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    folder = prepared(project, ralph_env, ralph, stories=2)
    prd = read_json(folder / "prd.json")
    prd["userStories"][0]["passes"] = True
    (folder / "prd.json").write_text(json.dumps(prd, indent=2))
    git(project, ralph_env, "commit", "-qam", "S-1 done")

    done = ralph("run", "-f", "feat", "-s", "S-2", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ALL COMPLETE! 2/2" not in done.stdout  # the run saw one story: it says so
    assert "ALL COMPLETE! 1/1" in done.stdout
    assert (project / ".ralph" / "archive").is_dir()


# ---------------------------------------------------------------- 5. one set of numbers


def test_a_usage_limited_call_is_numbered_but_not_counted_on_every_surface(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    config = "usage_limit:\n  policy: wait\n  margin_seconds: 0\n"
    folder = prepared(project, ralph_env, ralph, stories=1, config=config)
    limited = "Claude AI usage limit reached|1000000000"  # a reset long past: no wait
    cmd = agent_cmd("limit_once.py", str(tmp_path / "limited-once"), limited)

    done = ralph("run", "-f", "feat", "--no-archive", "--agent-cmd", cmd)

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "── Iteration 1 / 20 · S-1" in out
    assert "── Iteration 2 · S-1: Story 1 · this run: 0/20 counted so far, 1 call not counted" in out
    assert "Summary: 1 iteration (+1 call not counted) · 1 advanced, 0 failed" in out
    assert "  Completed:       1 / 20\n  Not counted:     1 agent call" in out
    assert "Success Rate:    100%" in out
    assert [(line["iteration"], line["counted"]) for line in metrics(folder)] == [(1, False), (2, True)]
    progress = (folder / "progress.txt").read_text()
    assert "Iteration: 1\n" in progress and "Iteration: 2\n" in progress
    status = ralph("status", "-f", "feat").stdout
    assert "Iteration:  2 · counted 1 of 20 this run, 1 call not counted" in status
    report = ralph("report", "-f", "feat").stdout
    assert "  Completed:       1\n" in report and "Not counted:     1 agent call" in report


def test_iterations_that_open_the_breaker_are_not_a_success(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)

    done = ralph("run", "-f", "feat", "--agent-cmd", plan(tmp_path, {"*": {"say": "still thinking"}}))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "circuit_open" in done.stdout
    assert "Success Rate:    0%" in done.stdout
    assert all(line["success"] is False for line in metrics(folder))
    assert "Summary: 3 iterations · 0 advanced, 0 failed" in done.stdout


# ---------------------------------------------------------------- 6. reset-circuit shows at once


def test_status_and_monitor_show_a_reset_circuit_at_once(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    prepared(project, ralph_env, ralph)
    assert ralph("run", "-f", "feat", "--agent-cmd", plan(tmp_path, {"*": {}})).returncode == 1
    assert json.loads(ralph("status", "-f", "feat", "--json").stdout)["status"] == "circuit_open"

    assert ralph("reset-circuit", "-f", "feat").returncode == 0

    report = json.loads(ralph("status", "-f", "feat", "--json").stdout)
    assert (report["status"], report["circuitState"], report["exitReason"]) == ("halted", "CLOSED", "circuit_open")
    shown = ralph("status", "-f", "feat").stdout
    assert "Status:     halted (stopped on an open circuit, reset since: run again to go on)" in shown
    assert "Circuit:" not in shown
    monitor = ralph("monitor", "-f", "feat").stdout
    assert "circuit CLOSED" in monitor or "Circuit" not in monitor
    assert "Ralph has exited: halted" in monitor


# ---------------------------------------------------------------- 7. churn trips the breaker


def test_files_that_churn_while_no_task_advances_trip_the_breaker(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    cmd = plan(tmp_path, {"*": {"write": {"churn.txt": "{rand}\n"}, "commit": "churn {n}"}})

    done = ralph("run", "-f", "feat", "--no-archive", "--agent-cmd", cmd)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "no progress in 3 iterations in a row (files changed in 3 of them, but no task advanced)" in done.stdout
    assert len(metrics(folder)) == 3


# ---------------------------------------------------------------- 9. the agent's last words when it needs the user


BLOCKED_REPLY = BLOCKED.replace(  # the agent explains first, then its last paragraph says what it needs
    "I cannot reach the database.", "I cannot reach the database.\n\nPlease start it with `docker compose up db`."
)


def test_a_blocked_stop_shows_what_the_agent_last_said(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    prepared(project, ralph_env, ralph)

    done = ralph("run", "-f", "feat", "--agent-cmd", plan(tmp_path, {"*": {"say": BLOCKED_REPLY}}))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Stopped (blocked)" in done.stdout
    said = "Please start it with `docker compose up db`."
    assert f"The agent's last words: {said}" in done.stdout
    assert f"Agent said: {said}" in ralph("status", "-f", "feat").stdout


def test_a_call_that_did_not_count_is_saved_and_undone_marks_and_all(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    config = "usage_limit:\n  policy: wait\n  margin_seconds: 0\n"
    folder = prepared(project, ralph_env, ralph, stories=2, config=config)
    limited = "Claude AI usage limit reached|1000000000"  # a reset long past: no wait
    record = tmp_path / "tasks.jsonl"
    steps = {
        "1": {"record": str(record), "write": {"half.txt": "half\n"}, "pass": ["S-1"], "say_err": limited, "exit": 1},
        "*": {"record": str(record), "write": {"s.txt": "{n}\n"}, "pass": ["S-1", "S-2"]},
    }

    done = ralph("run", "-f", "feat", "--no-archive", "--agent-cmd", plan(tmp_path, steps))

    assert done.returncode == 0, done.stdout + done.stderr
    first, second = (folder / "progress.txt").read_text().split("\n---\n")[1:3]
    assert "Status: usage-limit" in first
    assert "usage-limited attempt saved as refs/ralph/attempts/feat/iteration-1" in first
    assert not (project / "half.txt").exists()  # undone, after it was saved:
    assert git(project, ralph_env, "show", "refs/ralph/attempts/feat/iteration-1:half.txt") == "half\n"
    # the next iteration found S-1 open again, and it is the iteration that finished it
    assert "Story: S-1 - Story 1" in second and "Status: complete" in second
    assert [line["counted"] for line in metrics(folder)] == [False, True]


ADD_A_STORY = """
import json, os, sys
sys.stdin.read()
path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
prd = json.load(open(path))
n = len(prd["userStories"]) + 1
prd["userStories"].append({"id": f"S-{n}", "title": f"Story {n}", "acceptanceCriteria": ["c"], "priority": n,
                           "passes": False})
json.dump(prd, open(path, "w"), indent=2)
print("planned one more story")
"""


def test_an_agent_that_only_adds_stories_is_not_making_progress(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    script = tmp_path / "add_a_story.py"
    script.write_text(ADD_A_STORY)

    done = ralph("run", "-f", "feat", "--agent-cmd", f"{PYTHON} {script}")

    assert done.returncode == 1, done.stdout + done.stderr
    assert "no progress in 3 iterations in a row" in done.stdout
    assert len(read_json(folder / "prd.json")["userStories"]) == 6


def test_a_run_that_stops_before_any_call_still_shows_the_calls_of_the_hour(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph)
    assert ralph("run", "-f", "feat", "--agent-cmd", plan(tmp_path, {"*": {}})).returncode == 1  # the circuit opens

    again = ralph("run", "-f", "feat", "--agent-cmd", plan(tmp_path, {"*": {}}))

    assert again.returncode == 1 and "circuit_open" in again.stdout, again.stdout + again.stderr
    assert read_json(folder / "status.json")["apiCallsUsed"] == 3
    assert "Calls:      3/100 in the last hour" in ralph("status", "-f", "feat").stdout
