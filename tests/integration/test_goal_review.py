"""Review of goal mode, lifecycle hooks and quality gates: bugs a user would hit, shown with real `ralph run`
processes in real git repositories. Each test names a bug the review found;"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PYTHON, RalphRunner, agent_cmd, read_json, write_prd
from tests.integration.helpers import pid_alive, read_pid, wait_until
from tests.integration.test_goal_mode import (
    GOAL_AGENT,
    SPRINT_DIR,
    progress_yaml,
    run_goal,
    sprint_yaml,
    write_sprint,
)
from tests.integration.test_story_specs import commit_all, spec, write_specs


def configure(project: Path, text: str) -> None:
    """Append YAML `text` to .ralph/config.yaml (made when missing)."""
    (project / ".ralph").mkdir(exist_ok=True)
    with (project / ".ralph" / "config.yaml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + text)


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    """tests/agents/step_agent.py with this plan."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def script_agent(tmp_path: Path, name: str, source: str, *args: str) -> str:
    """An agent command running `source` (written to tmp_path/name) with this Python."""
    script = tmp_path / name
    script.write_text(source)
    return shlex.join([PYTHON, str(script), *args])


def output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def result_block(result: dict[str, Any]) -> str:
    return "```json\n" + json.dumps(result) + "\n```"


@contextmanager
def running_ralph(project: Path, env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:
    """`ralph ARGS` in the background; killed at the end if still running."""
    proc = subprocess.Popen(
        [PYTHON, "-m", "ralphloop", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def kill_group(pid: int | None) -> None:
    """Clean up a hook process (and its process group) a test left behind."""
    if pid is None or not pid_alive(pid):
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------- gates skipped after an unclean run


def test_a_gate_runs_when_a_failed_agent_run_leaves_every_story_passing(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    write_prd(feature, 1)
    gate_runs = tmp_path / "gate.runs"
    configure(project, f"quality_checks:\n  tests: echo ran >> {shlex.quote(str(gate_runs))}; exit 1\n")
    # the agent sets passes: true, then crashes (exit 1): a failed run, the story file says done
    cmd = plan_agent(tmp_path, {"*": {"pass": ["S-1"], "say": "done, then a crash", "exit": 1}})

    done = ralph("run", "-n", "2", "--no-archive", "--agent-cmd", cmd)

    # a story passes, and the loop completes, only when every gate passes: this gate never does
    assert read_json(feature / "status.json")["exitReason"] != "complete", output(done)
    assert done.returncode != 0, output(done)
    assert gate_runs.exists(), "the quality gate never ran"


def test_completion_trust_in_goal_mode_ignores_a_claim_from_a_failed_run(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    configure(project, "completion: trust\n")
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="min-iterations: 5\n"))
    cmd = plan_agent(tmp_path, {"*": {"say": "<promise>COMPLETE</promise>", "exit": 1}})

    done = run_goal(ralph, "-n", "2", cmd=cmd)

    assert read_json(folder / "status.json")["exitReason"] != "complete", output(done)
    assert done.returncode != 0, output(done)
    assert progress_yaml(folder)["status"] != "completed"


# ---------------------------------------------------------------- every task done, a gate failing


def test_a_story_ralph_marked_done_is_reopened_when_its_gate_fails(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    write_specs(project, {"1.1": spec("1.1")})
    configure(project, "quality_checks:\n  tests: echo 'FAILED test_login'; exit 1\n")
    commit_all(project, ralph_env)
    # "it was already there": a DONE tag, no file changed
    cmd = plan_agent(tmp_path, {"*": {"say": "It was already there.\n<ralph>DONE 1.1</ralph>"}})

    done = ralph("run", "-n", "3", "--agent-cmd", cmd)

    assert "internal error" not in output(done), output(done)
    assert "Traceback" not in output(done)
    assert done.returncode == 1, output(done)
    story = (project / "specs" / "epic-1" / "story-1.1-slug-1-1.md").read_text()
    assert "status: pending" in story, story  # its gate fails: the story does not pass


def test_every_story_done_with_a_failing_gate_and_no_git_is_not_a_crash(
    tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    root = tmp_path / "nogit"
    root.mkdir()

    def ralph(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PYTHON, "-m", "ralphloop", *args],
            check=False,
            cwd=root,
            env=ralph_env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert ralph("init", "feat").returncode == 0
    feature = root / ".ralph" / "feat"
    write_prd(feature, 1)
    configure(root, "git:\n  require: false\nquality_checks:\n  tests: echo 'FAILED test_login'; exit 1\n")
    cmd = plan_agent(tmp_path, {"*": {"pass": ["S-1"], "say": "S-1 done"}})

    done = ralph("run", "-n", "3", "--agent-cmd", cmd)

    assert "internal error" not in output(done), output(done)
    assert done.returncode == 1, output(done)
    assert read_json(feature / "status.json")["exitReason"] != "complete"


# ---------------------------------------------------------------- PROGRESS.yaml edited by the agent

EDIT_PROGRESS = """\
import sys, yaml
sys.stdin.read()
path = sys.argv[1]
with open(path, encoding="utf-8") as handle:
    data = yaml.safe_load(handle)
data["status"] = "completed"
data["ralph-exit"] = {"detected-at": "2026-01-01T00:00:00Z", "iteration": 1, "final-summary": "I say so"}
with open(path, "w", encoding="utf-8") as handle:
    yaml.safe_dump(data, handle)
print("I filled in ralph-exit myself; no JSON result.")
"""


def test_the_agent_cannot_complete_the_goal_by_editing_progress_yaml(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="min-iterations: 3\n"))
    cmd = script_agent(tmp_path, "edit_progress.py", EDIT_PROGRESS, str(folder / "PROGRESS.yaml"))

    done = run_goal(ralph, "-n", "2", cmd=cmd)

    assert read_json(folder / "status.json")["exitReason"] != "complete", output(done)
    assert done.returncode != 0, output(done)


def test_an_edited_progress_yaml_and_a_failing_gate_are_not_a_crash(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    configure(project, "quality_checks:\n  tests: echo 'FAILED test_login'; exit 1\n")
    folder = write_sprint(project, ralph_env, sprint_yaml())
    cmd = script_agent(tmp_path, "edit_progress.py", EDIT_PROGRESS, str(folder / "PROGRESS.yaml"))

    done = run_goal(ralph, "-n", "3", cmd=cmd)

    assert "internal error" not in output(done), output(done)
    assert "Traceback" not in output(done)
    assert done.returncode == 1, output(done)


# ---------------------------------------------------------------- background hooks and the breaker

IDLE_AGENT = """\
import json, sys, time
sys.stdin.read()
time.sleep(2)  # long enough for the previous iteration's background hook to end meanwhile
print("I looked around and changed nothing.")
print("```json\\n" + json.dumps({"status": "continue", "summary": "looked around"}) + "\\n```")
"""


@pytest.mark.slow
def test_a_background_hook_writing_a_file_is_not_the_agents_progress(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    hooks = """\
    - id: learning
      command: sleep 0.5; echo "learned in iteration $ITERATION" >> LEARNINGS.md
      parallel: true
    """
    folder = write_sprint(project, ralph_env, sprint_yaml(hooks=hooks))
    cmd = script_agent(tmp_path, "idle.py", IDLE_AGENT)

    done = run_goal(ralph, "-n", "6", cmd=cmd)

    # Without the hook this run stops with circuit_open (3 iterations without progress); a file the background
    # hook writes while an idle agent plans must not keep the loop alive. (It is still listed among the
    # iteration's changed files: ralph cannot tell who wrote it.)
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "circuit_open", output(done)


# ---------------------------------------------------------------- Ctrl+C and background or end hooks


def slow_hook_sprint(project: Path, env: dict[str, str], pidfile: Path) -> Path:
    hooks = f"""\
    - id: slow
      command: echo $$ > {shlex.quote(str(pidfile))}; exec sleep 60
      parallel: true
    """
    return write_sprint(project, env, sprint_yaml(hooks=hooks))


def test_ctrl_c_while_waiting_for_background_hooks_stops_them(
    project: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "hook.pid"
    folder = slow_hook_sprint(project, ralph_env, pidfile)
    env = {**ralph_env, "GOAL_ALWAYS_COMPLETE": "1"}  # complete in iteration 1: then ralph waits for the hook
    try:
        with running_ralph(project, env, "run", f"{SPRINT_DIR}/", "--agent-cmd", GOAL_AGENT) as proc:
            assert wait_until(lambda: read_pid(pidfile) is not None)
            time.sleep(0.5)
            os.kill(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pytest.fail("one Ctrl+C did not stop the wait for the background hook (still running after 15 s)")
            assert not pid_alive(read_pid(pidfile) or 0)
            task = progress_yaml(folder)["hook-tasks"][0]
            assert task["status"] == "failed", task
    finally:
        kill_group(read_pid(pidfile))


def test_a_second_ctrl_c_leaves_no_background_hook_running(
    project: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "hook.pid"
    folder = slow_hook_sprint(project, ralph_env, pidfile)
    env = {**ralph_env, "GOAL_ALWAYS_COMPLETE": "1"}
    try:
        with running_ralph(project, env, "run", f"{SPRINT_DIR}/", "--agent-cmd", GOAL_AGENT) as proc:
            assert wait_until(lambda: read_pid(pidfile) is not None)
            time.sleep(0.5)
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(1)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGINT)  # "Ctrl+C again to quit at once"
            proc.wait(timeout=15)
        hook = read_pid(pidfile)
        assert hook is not None
        assert wait_until(lambda: not pid_alive(hook), limit=5), "the background hook outlived ralph"
        statuses = [task["status"] for task in progress_yaml(folder)["hook-tasks"]]
        assert "spawned" not in statuses, statuses
    finally:
        kill_group(read_pid(pidfile))


def test_a_second_ctrl_c_leaves_no_end_hook_running(project: Path, ralph_env: dict[str, str], tmp_path: Path) -> None:
    pidfile = tmp_path / "end-hook.pid"
    configure(project, f"hooks:\n  on_complete: echo $$ > {shlex.quote(str(pidfile))}; exec sleep 60\n")
    write_sprint(project, ralph_env, sprint_yaml())
    env = {**ralph_env, "GOAL_ALWAYS_COMPLETE": "1"}
    try:
        with running_ralph(project, env, "run", f"{SPRINT_DIR}/", "--agent-cmd", GOAL_AGENT) as proc:
            assert wait_until(lambda: read_pid(pidfile) is not None)
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(1)
            os.kill(proc.pid, signal.SIGINT)  # "Ctrl+C again to quit at once"
            proc.wait(timeout=15)
            assert proc.returncode == 130
        hook = read_pid(pidfile)
        assert hook is not None
        assert wait_until(lambda: not pid_alive(hook), limit=5), "the on_complete hook outlived ralph"
    finally:
        kill_group(read_pid(pidfile))


# ---------------------------------------------------------------- a JSON result ralph cannot write


def test_a_lone_surrogate_in_the_json_result_neither_crashes_nor_breaks_progress_yaml(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    # the text as the agent prints it: a JSON escape for half a surrogate pair (a cut-off emoji)
    body = '{"status": "continue", "pendingSteps": [{"id": null, "prompt": "fix the \\ud83d button"}]}'
    cmd = plan_agent(tmp_path, {"*": {"say": "```json\n" + body + "\n```"}})

    done = run_goal(ralph, "-n", "1", cmd=cmd)
    again = run_goal(ralph, "-n", "1", cmd=cmd)

    assert "internal error" not in output(done), output(done)
    assert "invalid YAML" not in output(again), output(again)
    assert "internal error" not in output(again), output(again)
    assert [step["id"] for step in progress_yaml(folder)["dynamic-steps"]] == ["step-0"]


# ---------------------------------------------------------------- a hook that cannot start


def test_a_hook_id_too_long_to_name_its_log_is_a_one_line_error(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """A hook id names its log and prompt files: one too long for a file name (ENAMETOOLONG once crashed the
    run after the hook was recorded as spawned) is refused before anything starts."""
    hooks = f"""\
    - id: extract-{"x" * 300}
      prompt: Read $ITERATION_TRANSCRIPT
      parallel: false
    """
    write_sprint(project, ralph_env, sprint_yaml(hooks=hooks))

    done = run_goal(ralph, "-n", "2")

    assert "internal error" not in output(done), output(done)
    assert done.returncode == 1
    assert "at most 100 characters" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


# ---------------------------------------------------------------- SPRINT.yaml mid-edit when the agent ends

PLAN_WHILE_SPRINT_IS_EDITED = """\
import json, sys
sys.stdin.read()
path = sys.argv[1]
with open(path, encoding="utf-8") as handle:
    text = handle.read()
with open(path, "w", encoding="utf-8") as handle:  # the user, half-way through an edit of the goal
    handle.write(text.replace("goal: |", "goal: [half-typed"))
result = {"status": "continue", "summary": "planned", "pendingSteps": [{"id": None, "prompt": "write a.txt"}]}
print("```json\\n" + json.dumps(result) + "\\n```")
"""


def test_the_iterations_result_is_kept_when_sprint_yaml_is_mid_edit(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    cmd = script_agent(tmp_path, "plan_mid_edit.py", PLAN_WHILE_SPRINT_IS_EDITED, str(folder / "SPRINT.yaml"))

    done = run_goal(ralph, "-n", "2", cmd=cmd)

    assert done.returncode == 1, output(done)
    assert "sprints/auth/SPRINT.yaml: invalid YAML" in output(done)
    steps = progress_yaml(folder)["dynamic-steps"]
    assert [(step["id"], step["prompt"]) for step in steps] == [("step-0", "write a.txt")], steps
