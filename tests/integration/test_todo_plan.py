"""Seed 004's TODO.md plan folders, end to end: `ralph run PLAN_DIR [ITERATIONS]` in a real git repo."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import assert_one_line_error, git, progress_entries, snapshot

TODO = "# Plan\n\n- [ ] Add the parser\n- [ ] Add the printer\n  - [ ] Nested: printer tests\n- [x] Set up the repo\n"


def make_plan(project: Path, env: dict[str, str], text: str = TODO, name: str = "plans/arena") -> Path:
    plan = project / name
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text(text)
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "plan")
    return plan


def git_log(project: Path, env: dict[str, str]) -> list[str]:
    return git(project, env, "log", "--format=%s").splitlines()


def test_plan_dir_runs_until_complete_and_commits_each_task(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    plan = make_plan(project, ralph_env)
    done = ralph("run", "plans/arena/", "--agent-cmd", agent_cmd("checklist_agent.py", "TODO.md"))
    assert done.returncode == 0, done.stdout + done.stderr
    # no ITERATIONS: unlimited, as seed 004 shows it
    assert "Iteration 1 / unlimited" in done.stdout
    assert "ALL COMPLETE!" in done.stdout
    assert "- [ ]" not in (plan / "TODO.md").read_text()
    # progress.txt and ralph_metrics.jsonl live in the plan folder
    assert len(progress_entries((plan / "progress.txt").read_text())) == 3
    metrics = [json.loads(line) for line in (plan / "ralph_metrics.jsonl").read_text().splitlines()]
    assert [line["iteration"] for line in metrics] == [1, 2, 3]
    assert all(line["files_changed"] >= 2 for line in metrics)  # TODO.md and work-N.txt
    # auto-commit is on for plan folders: one commit per task, named after it; runtime files never committed
    assert git_log(project, ralph_env)[:3] == ["Nested: printer tests", "Add the printer", "Add the parser"]
    tracked = git(project, ralph_env, "ls-files")
    assert "plans/arena/status.json" not in tracked and "plans/arena/logs/" not in tracked
    assert "plans/arena/progress.txt" in tracked and "work-1.txt" in tracked
    seen = [json.loads(line) for line in (project / "seen.jsonl").read_text().splitlines()]
    assert [item["task"] for item in seen] == ["T1", "T2", "T3"]


def test_iterations_argument_limits_the_run(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    make_plan(project, ralph_env)
    done = ralph("run", "plans/arena", "1", "--agent-cmd", agent_cmd("checklist_agent.py", "TODO.md"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Iteration 1 / 1" in done.stdout
    assert "max_iterations" in done.stdout


def test_auto_commit_can_be_turned_off(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    make_plan(project, ralph_env)
    (project / ".ralph").mkdir()
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: false\n")
    before = git_log(project, ralph_env)
    done = ralph("run", "plans/arena", "--agent-cmd", agent_cmd("checklist_agent.py", "TODO.md"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert git_log(project, ralph_env) == before


def test_plan_dir_without_todo_is_the_seeds_error(project: Path, ralph: RalphRunner) -> None:
    (project / "plans" / "empty").mkdir(parents=True)
    (project / "plans" / "empty" / "notes.md").write_text("nothing here\n")
    before = snapshot(project)
    done = ralph("run", "plans/empty/", "--agent-cmd", agent_cmd("say.py", "hi"))
    assert_one_line_error(done, "TODO.md not found in plan directory")
    assert "plans/empty" in done.stderr
    assert snapshot(project) == before


def test_todo_without_tasks_is_a_clear_error(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    make_plan(project, ralph_env, "# Plan\n\nJust prose, and a [2026-01-29] date.\n")
    before = snapshot(project)
    done = ralph("run", "plans/arena", "--agent-cmd", agent_cmd("say.py", "hi"))
    assert_one_line_error(done, "no tasks")
    assert "plans/arena/TODO.md" in done.stderr
    assert snapshot(project) == before


def test_iterations_must_be_a_positive_integer(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    make_plan(project, ralph_env)
    before = snapshot(project)
    for bad in ("0", "-3", "ten"):
        done = ralph("run", "plans/arena", bad, "--agent-cmd", agent_cmd("say.py", "hi"))
        assert_one_line_error(done, "positive integer")
    assert snapshot(project) == before
