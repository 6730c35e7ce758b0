"""Another Ralph tool's runtime files in `.ralph/` (issue 31): frankbria/ralph-claude-code keeps status.json,
.circuit_breaker_state and .exit_signals there, where ralph keeps its own for a workspace at the project root, and
some projects commit them. ralph never obeys, shows nor rewrites them: it keeps its state in `.ralph/.ralphloop/`,
and says so. An older ralph's files (no mark yet) are still ralph's. Every test runs the real CLI in a real git
repository."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import assert_one_line_error, git

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "fixplan" / "NoobyNull__vigilant-octo-train"
PREVIOUS = Path(__file__).resolve().parents[1] / "fixtures" / "previous" / "feat"
THEIRS = (".circuit_breaker_state", "status.json", ".exit_signals")  # the names ralph uses too
AGENT = agent_cmd("checklist_agent.py", ".ralph/fix_plan.md")
NOTICE = (
    ".ralph/.circuit_breaker_state, .ralph/status.json, .ralph/.exit_signals are frankbria/ralph-claude-code's"
    " runtime files (not ralph's): ralph leaves them alone and keeps its state in .ralph/.ralphloop/; to stop"
    " committing them: git rm --cached .ralph/.circuit_breaker_state .ralph/status.json .ralph/.exit_signals"
    " and add them to .gitignore"
)


def _their_project(project: Path, env: dict[str, str]) -> dict[str, bytes]:
    """The real project's `.ralph/` (a fix plan, and that tool's files with an OPEN circuit), committed."""
    shutil.copytree(WILD / ".ralph", project / ".ralph")
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "frankbria's loop")
    return {name: (project / ".ralph" / name).read_bytes() for name in THEIRS}


def test_frankbria_files_are_left_alone_and_never_obeyed(project: Path, ralph: RalphRunner, ralph_env):
    theirs = _their_project(project, ralph_env)
    assert json.loads(theirs[".circuit_breaker_state"])["state"] == "OPEN"

    validate = ralph("validate")
    before = ralph("status", "--json")
    done = ralph("run", "-n", "2", "--agent-cmd", AGENT)
    after = ralph("status", "--json")
    screen = ralph("status")

    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert f"warning: {NOTICE}" in validate.stdout.splitlines(), validate.stdout
    assert json.loads(before.stdout)["status"] == "not started"  # not their "running", nor their loop count
    assert done.returncode == 1 and "max_iterations" in done.stdout, done.stdout + done.stderr
    assert "circuit_open" not in done.stdout and "OPEN" not in done.stdout  # their OPEN circuit stopped nothing
    assert "── Iteration 2 / 2" in done.stdout, done.stdout
    assert (done.stdout + done.stderr).count(NOTICE) == 1  # said once, on the run's screen
    report = json.loads(after.stdout)
    assert (report["totalIterations"], report["circuitState"], report["exitReason"]) == (2, "CLOSED", "max_iterations")
    assert "Iteration:  2 / 2" in screen.stdout and "OPEN" not in screen.stdout, screen.stdout
    own = project / ".ralph" / ".ralphloop"
    assert read_json(own / "status.json")["writer"] == "ralphloop"
    assert read_json(own / ".circuit_breaker_state")["writer"] == "ralphloop"
    assert ".ralphloop/" in (project / ".ralph" / ".gitignore").read_text().splitlines()
    # their tracked files: the same bytes, unmodified for git, and nothing of ralph's for an agent's `git add -A`
    assert {name: (project / ".ralph" / name).read_bytes() for name in THEIRS} == theirs
    assert git(project, ralph_env, "status", "--porcelain", "--", *(f".ralph/{name}" for name in THEIRS)) == ""
    added = git(project, ralph_env, "add", "-A", "--dry-run")
    assert ".ralphloop" not in added and all(f".ralph/{name}" not in added for name in THEIRS), added


def test_ralph_stays_in_its_own_folder_once_it_made_it(project: Path, ralph: RalphRunner, ralph_env):
    _their_project(project, ralph_env)
    assert ralph("run", "-n", "1", "--agent-cmd", AGENT).returncode == 1
    git(project, ralph_env, "rm", "-q", *(f".ralph/{name}" for name in THEIRS))  # the user followed the advice

    validate = ralph("validate")
    again = ralph("run", "-n", "1", "--agent-cmd", AGENT)

    assert "frankbria" not in validate.stdout, validate.stdout  # nothing of theirs is left to name
    assert again.returncode == 1, again.stdout + again.stderr
    assert json.loads(ralph("status", "--json").stdout)["totalIterations"] == 2  # numbered after the first run
    assert not (project / ".ralph" / "status.json").exists()


def test_an_older_ralphs_files_without_the_mark_are_still_ralphs(project: Path, ralph: RalphRunner, ralph_env):
    """Files an older ralph wrote at the root's `.ralph/` (tests/fixtures/previous/: schema_version, no mark):
    read as ralph's, their numbers shown and continued, their open circuit obeyed; no folder of ralph's own."""
    ralph_dir = project / ".ralph"
    shutil.copytree(WILD / ".ralph", ralph_dir, ignore=shutil.ignore_patterns(".*", "status.json"))  # the plan
    for name in ("status.json", "state.json", ".exit_signals", ".circuit_breaker_state", "logs"):
        copy = shutil.copytree if (PREVIOUS / name).is_dir() else shutil.copyfile
        copy(PREVIOUS / name, ralph_dir / name)
    assert "writer" not in read_json(ralph_dir / "status.json")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "plan")

    validate = ralph("validate")
    shown = json.loads(ralph("status", "--json").stdout)
    done = ralph("run", "-n", "1", "--agent-cmd", AGENT)
    breaker = read_json(ralph_dir / ".circuit_breaker_state")
    breaker.update(state="OPEN", reason="no progress in 3 iterations")  # as an older ralph left an open circuit
    breaker.pop("writer")
    (ralph_dir / ".circuit_breaker_state").write_text(json.dumps(breaker, indent=2) + "\n")
    stopped = ralph("run", "-n", "1", "--agent-cmd", AGENT)

    assert "warning:" not in validate.stdout, validate.stdout
    assert shown["totalIterations"] == 2 and shown["status"] == "halted", shown
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Iteration 3" in done.stdout, done.stdout  # numbered after the older ralph's two
    assert read_json(ralph_dir / "status.json")["writer"] == "ralphloop"  # rewritten by ralph, now marked
    assert stopped.returncode == 1 and "circuit_open" in stopped.stdout, stopped.stdout
    assert not (ralph_dir / ".ralphloop").exists()


def _kinds(root: Path) -> dict[str, object]:
    """Every entry under `root` (never through a link, never reading a FIFO): a file's bytes, else its kind."""
    found: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            mode = path.lstat().st_mode
            kind = "link" if stat.S_ISLNK(mode) else "folder" if stat.S_ISDIR(mode) else "fifo"
            found[str(path.relative_to(root))] = path.read_bytes() if stat.S_ISREG(mode) else kind
    return found


@pytest.mark.parametrize("spoilt", ["fifo", "link outside"])
def test_every_command_that_writes_in_ralphs_own_folder_refuses_one_that_is_not_a_real_folder(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, spoilt: str
) -> None:
    """A root fix plan beside frankbria's status.json: ralph's state goes to .ralph/.ralphloop/. A FIFO there ended
    reset-circuit in an internal error; a link to a folder outside had it write the breaker's files and its lock
    there. Each command that writes in that folder refuses it in one line, and nothing is written anywhere."""
    for name in ("fix_plan.md", "PROMPT.md"):
        shutil.copyfile(WILD / ".ralph" / name, project / name)
    (project / ".ralph").mkdir()
    shutil.copyfile(WILD / ".ralph" / "status.json", project / ".ralph" / "status.json")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "a root plan, and frankbria's status.json")
    outside = tmp_path / "outside"
    outside.mkdir()
    own = project / ".ralph" / ".ralphloop"
    if spoilt == "fifo":
        os.mkfifo(own)
    else:
        own.symlink_to(outside)
    before = _kinds(project)

    for words in (
        ("reset-circuit",),
        ("signal", "learn", "a lesson"),
        ("run", "-n", "1", "--agent-cmd", AGENT),
        ("run", "--reset-circuit", "-n", "1", "--agent-cmd", AGENT),
    ):
        done = ralph(*words, timeout=30)
        kind = "not a folder" if spoilt == "fifo" else "a symbolic link"
        assert_one_line_error(done, f".ralph/.ralphloop: {kind} where ralph keeps its state; remove it")

    assert _kinds(project) == before
    assert list(outside.iterdir()) == []
