"""Edges of the workspace and git handling found in review: `ralph run .` twice, a project below the git top,
--log-file inside the repository, auto-commit next to the user's own uncommitted work, and resuming a root workspace."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import git, wait_until

TODO = "# Plan\n\n- [ ] one\n- [ ] two\n- [ ] three\n"


def commit(project: Path, env: dict[str, str], message: str = "plan") -> None:
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", message)


def test_run_dot_works_again_after_the_first_run(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    (project / "TODO.md").write_text(TODO)
    commit(project, ralph_env)
    agent = agent_cmd("checklist_agent.py", "TODO.md")
    first = ralph("run", ".", "1", "--agent-cmd", agent)
    assert first.returncode == 1, first.stdout + first.stderr  # max iterations, one task done
    assert (project / ".ralph" / "state.json").is_file()  # the root's runtime files went to .ralph/
    second = ralph("run", ".", "1", "--agent-cmd", agent)
    assert ".ralph: TODO.md not found" not in second.stderr
    assert "T2: two" in second.stdout, second.stdout + second.stderr


def test_plan_dir_in_a_project_below_the_git_top(ralph: RalphRunner, project: Path, ralph_env: dict[str, str]) -> None:
    sub = project / "sub"
    (sub / ".ralph").mkdir(parents=True)
    (sub / ".ralph" / "config.yaml").write_text("")
    plan = sub / "plans" / "x"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text(TODO)
    commit(project, ralph_env)
    failing = agent_cmd("say.py", "hi", "--exit", "1")
    done = ralph("run", "plans/x", "2", "--agent-cmd", failing, cwd=sub)
    assert "internal error" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert (plan / "logs" / "iteration-2.log").is_file()
    # ralph's runtime files are not left as untracked files for the user's next `git add -A`
    status = git(project, ralph_env, "status", "--porcelain", "-uall")
    assert "status.json" not in status and "state.json" not in status, status


def test_log_file_in_the_project_is_not_committed(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    plan = project / "plans" / "x"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text(TODO)
    commit(project, ralph_env)
    done = ralph("run", "plans/x", "--log-file", "ralph.log", "--agent-cmd", agent_cmd("checklist_agent.py", "TODO.md"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ralph.log" not in git(project, ralph_env, "ls-files")


def test_log_file_survives_a_failed_attempt(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    plan = project / "plans" / "x"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text(TODO)
    commit(project, ralph_env)
    failing = agent_cmd("say.py", "hi", "--exit", "1")
    done = ralph("run", "plans/x", "2", "--log-file", "ralph.log", "--agent-cmd", failing)
    assert done.returncode == 1, done.stdout + done.stderr
    log = (project / "ralph.log").read_text()
    assert "Iteration 2" in log, log


def test_auto_commit_leaves_the_users_earlier_work_alone(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    plan = project / "plans" / "x"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text(TODO)
    (project / "notes.txt").write_text("tracked\n")
    commit(project, ralph_env)
    (project / "notes.txt").write_text("my unfinished edit\n")
    (project / "secret.env").write_text("TOKEN=abc\n")
    done = ralph("run", "plans/x", "--agent-cmd", agent_cmd("checklist_agent.py", "TODO.md"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "untracked file" in done.stdout  # the preflight warned
    committed = git(project, ralph_env, "log", "--name-only", "--format=", "HEAD~3..HEAD")
    assert "secret.env" not in committed and "notes.txt" not in committed, committed


def test_resume_command_for_a_root_workspace_works(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    (project / "fix_plan.md").write_text("# Fix plan\n\n- [ ] one\n")
    commit(project, ralph_env)
    started = subprocess.Popen(
        [sys.executable, "-m", "ralphloop", "run", "--agent-cmd", "sleep 30"],
        cwd=project,
        env=ralph_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until((project / ".ralph" / "logs" / "iteration-1.log").exists)
        started.send_signal(signal.SIGINT)
        out, _ = started.communicate(timeout=30)
    finally:
        if started.poll() is None:
            started.kill()
    line = next(text for text in out.splitlines() if text.startswith("To continue, run: "))
    words = line.removeprefix("To continue, run: ralph ").split()
    dry = ralph(*[word.strip("'") for word in words], "--dry-run")
    assert dry.returncode == 0, (line, dry.stderr)
    assert os.path.isdir(project / ".ralph")
