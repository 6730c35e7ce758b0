"""A second look at "every report true", as a demanding user would try it: the real `ralph` CLI, real agent
processes, real git. Each test names a report that was still false, or a command that failed when pasted."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from tests.conftest import PYTHON, RalphRunner, agent_cmd, read_json
from tests.integration.test_goal_mode import SPRINT_DIR, progress_yaml, run_goal, sprint_yaml, write_sprint
from tests.integration.test_reports_true import git, passing, plan, prepared
from tests.integration.test_story_specs import commit_all, spec, write_specs


def test_a_one_story_run_of_a_story_that_already_passes_says_so_and_does_not_complete_the_feature(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    folder = prepared(project, ralph_env, ralph)
    prd = read_json(folder / "prd.json")
    prd["userStories"][1]["passes"] = True
    (folder / "prd.json").write_text(json.dumps(prd, indent=2))
    git(project, ralph_env, "commit", "-qam", "S-2 done")

    done = ralph("run", "-f", "feat", "-s", "S-2", "--agent-cmd", agent_cmd("story_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "ALL COMPLETE" not in done.stdout
    assert "✓ STORY S-2 done" in done.stdout and "2 other tasks still open" in done.stdout
    status = json.loads(ralph("status", "-f", "feat", "--json").stdout)
    assert (status["status"], status["exitReason"]) == ("story_done", "story_done")
    assert passing(folder) == ["S-2"]


def test_a_goal_step_whose_quality_gate_fails_is_not_committed(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    (project / ".ralph").mkdir()
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: true\nquality_checks:\n  tests: exit 1\n")
    folder = write_sprint(project, ralph_env, sprint_yaml())
    head = git(project, ralph_env, "rev-parse", "HEAD")

    done = run_goal(ralph, "-n", "2")

    assert "steps not completed, the quality checks fail: tests (step-0)" in done.stdout, done.stdout
    assert "committed" not in done.stdout
    assert git(project, ralph_env, "rev-parse", "HEAD") == head
    assert (project / "step-0.txt").exists()  # kept for the agent to fix, uncommitted
    assert [step["status"] for step in progress_yaml(folder)["dynamic-steps"]] == ["pending", "pending"]
    line = json.loads((folder / "ralph_metrics.jsonl").read_text().splitlines()[1])
    assert (line["task_id"], line["success"]) == ("step-0", False)


def pasted(command: str, project: Path, env: dict[str, str], *more: str) -> subprocess.CompletedProcess[str]:
    """A `ralph ...` command as ralph printed it, run as a user would paste it (ralph on PATH)."""
    words = shlex.split(command)
    assert words[0] == "ralph", command
    return subprocess.run(
        [*words, *more], cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_commands_an_open_circuit_prints_for_a_folder_outside_dot_ralph_work_when_pasted(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    write_sprint(project, ralph_env, sprint_yaml())

    done = run_goal(ralph, "-n", "5", cmd=plan(tmp_path, {"*": {"say": "no JSON result"}}))

    assert done.returncode == 1 and "circuit_open" in done.stdout, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    what = next(line for line in lines if "(ralph status" in line)
    shown = re.findall(r"\((ralph (?:logs|status) [^)]*)\)", what)  # what the agent did, and the progress log
    assert [command.split()[1] for command in shown] == ["logs", "status"], what
    reset = next(line for line in lines if "Then reset and continue:" in line).split(": ", 1)[1]
    reset_cmd, _, run_cmd = reset.partition("   (or: ")
    for command in shown:
        assert pasted(command, project, ralph_env).returncode == 0, command
    assert pasted(reset_cmd, project, ralph_env).returncode == 0, reset_cmd
    assert "Status:     halted" in ralph("status", "-f", SPRINT_DIR).stdout
    dry = pasted(run_cmd.rstrip(")"), project, ralph_env, "--dry-run", "--agent-cmd", "true")
    assert dry.returncode == 0, (run_cmd, dry.stderr)


def test_the_screen_does_not_call_a_story_open_when_a_usage_limited_call_left_it_passing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    prepared(project, ralph_env, ralph, stories=2, config="usage_limit:\n  policy: wait\n  margin_seconds: 0\n")
    limited = {"pass": ["S-1"], "say": "Claude AI usage limit reached|1000000000", "exit": 1}  # a reset long past

    done = ralph("run", "-f", "feat", "-n", "1", "--agent-cmd", plan(tmp_path, {"1": limited, "*": {}}))

    first = done.stdout.split("── Iteration 1", 1)[1].splitlines()[1]
    # and the call's mark on S-1 is put back: a call that did not count marks no task done
    assert first.startswith("  ⚠ S-1: usage limit, not counted · 0/2 · "), done.stdout


def test_status_and_monitor_say_when_their_counts_are_a_narrowed_runs_not_the_features(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    write_specs(project, {story: spec(story) for story in ("1.1", "1.2", "2.1")})
    commit_all(project, ralph_env)
    seen = {"SEEN_FILE": str(tmp_path / "seen.jsonl")}

    done = ralph("run", "-s", "1.2", "--agent-cmd", agent_cmd("spec_agent.py"), env=seen)

    assert done.returncode == 0 and "✓ STORY 1.2 done" in done.stdout, done.stdout + done.stderr
    stories = next(line for line in ralph("status").stdout.splitlines() if line.startswith("Stories:"))
    assert stories == "Stories:    1 / 1 done  [##########]  (story 1.2 only: the last run was narrowed)"
    monitor = ralph("monitor").stdout
    assert "Progress:   1/1 stories done (story 1.2 only: the last run was narrowed)" in monitor, monitor
    assert "1/1 done (story 1.2 only)" in monitor, monitor


def test_an_iteration_that_breaks_the_task_file_is_not_committed(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, config="git:\n  auto_commit: true\n")
    head = git(project, ralph_env, "rev-parse", "HEAD")
    broken = {"write": {"a.txt": "a\n", ".ralph/feat/prd.json": '{"userStories": ['}}

    done = ralph("run", "-f", "feat", "-n", "3", "--agent-cmd", plan(tmp_path, {"1": broken}))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "task file invalid after this iteration" in done.stdout
    assert "committed" not in done.stdout
    assert git(project, ralph_env, "rev-parse", "HEAD") == head
    assert (folder / "prd.json").read_text() == '{"userStories": ['  # left for the user to see and fix
    [line] = [json.loads(text) for text in (folder / "ralph_metrics.jsonl").read_text().splitlines()]
    assert line["success"] is False


AMEND_AND_SWITCH = """\
import subprocess, sys
sys.stdin.read()
open("amended.txt", "w").write("x\\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "--amend", "-m", "rewritten by the agent"], check=True)
subprocess.run(["git", "checkout", "-q", "-b", "agent-branch"], check=True)
sys.exit(5)
"""


def test_a_failed_attempt_that_rewrote_and_left_the_runs_branch_is_undone_on_that_branch(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    prepared(project, ralph_env, ralph)
    head = git(project, ralph_env, "rev-parse", "HEAD").strip()
    agent = tmp_path / "amend_and_switch.py"
    agent.write_text(AMEND_AND_SWITCH)

    done = ralph("run", "-f", "feat", "-n", "1", "--agent-cmd", shlex.join([PYTHON, str(agent)]))

    assert "then undone" in done.stdout, done.stdout + done.stderr
    assert git(project, ralph_env, "branch", "--show-current").strip() == "feature/feat"
    assert git(project, ralph_env, "rev-parse", "feature/feat").strip() == head  # the amend is not left on it
    assert not (project / "amended.txt").exists()
    assert git(project, ralph_env, "for-each-ref", "refs/ralph/attempts/")  # the attempt is saved


def test_the_command_retries_exhausted_prints_in_goal_mode_works_when_pasted(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    (project / ".ralph").mkdir()
    (project / ".ralph" / "config.yaml").write_text("max_retries: 2\n")
    write_sprint(project, ralph_env, sprint_yaml())

    done = run_goal(ralph, "-n", "5", cmd=plan(tmp_path, {"*": {"exit": 3}}))

    assert "retries_exhausted" in done.stdout, done.stdout + done.stderr
    told = next(line for line in done.stdout.splitlines() if "Human intervention required" in line)
    command = told.split("then run: ", 1)[1]
    dry = pasted(command, project, ralph_env, "--dry-run", "--agent-cmd", "true")
    assert dry.returncode == 0, (command, dry.stderr)
