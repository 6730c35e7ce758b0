"""What a kill leaves beside ralph's files is cleared by the next `ralph run` (issue 31, items 1 and 2), and
nothing a live process still uses is touched:

- an atomic write's temporary file (`.tmp-<pid>-xxxxxxxx`, files/store.py) whose writer was killed between the
  write and the rename: removed once its writer is gone (or it is ten minutes old); a writer still at work keeps
  its file, and a file that is not ralph's is never removed;
- the private index's lock (`.git/ralph/<feature>.index.lock`) a killed git left: removed though another git
  (an editor's, a pager left open) works in the repository (tests/workspace/test_gitlocks.py: a git naming that
  index keeps it).

Real `ralph run`, real git. The killed writer is ralph's own atomic writer in a process that SIGKILLs (or
SIGSTOPs) itself where it would fsync: the temporary file is the one a kill at that instant leaves."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PYTHON, RalphRunner, agent_cmd, write_prd
from tests.integration.helpers import git

# ralph's atomic writer, stopped by a signal it sends itself where it would fsync: between the write and the rename
WRITER = (
    "import os, signal, sys\n"
    "from ralphloop.files.store import atomic_write_text\n"
    "os.fsync = lambda fd: os.kill(os.getpid(), getattr(signal, sys.argv[2]))\n"
    "atomic_write_text(sys.argv[1], 'written\\n')\n"
)
OLD = time.time() - 11 * 60  # past leftovers.STALE_AFTER_S


def killed_writer(target: Path, env: dict[str, str]) -> Path:
    """The temporary file a writer of `target`, killed mid-write, left (its process gone)."""
    done = subprocess.run([PYTHON, "-c", WRITER, str(target), "SIGKILL"], env=env, check=False)
    assert done.returncode == -signal.SIGKILL
    return only_temp(target.parent)


def only_temp(folder: Path) -> Path:
    (found,) = folder.glob(".tmp-*")
    return found


@pytest.fixture
def stopped_writer(feature: Path, ralph_env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A writer of status.json stopped mid-write (SIGSTOP): alive, its temporary file not yet renamed."""
    writer = subprocess.Popen([PYTHON, "-c", WRITER, str(feature / "status.json"), "SIGSTOP"], env=ralph_env)
    try:
        os.waitpid(writer.pid, os.WUNTRACED)  # returns once it has stopped itself
        yield writer
    finally:
        writer.kill()
        writer.wait()


def run_once(ralph: RalphRunner) -> None:
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "working"))
    assert done.returncode == 1 and "max_iterations" in done.stdout, done.stdout + done.stderr


def test_the_temporary_file_of_a_writer_killed_mid_write_is_removed_by_the_next_run(
    feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    in_folder = killed_writer(feature / "state.json", ralph_env)
    (feature / "logs").mkdir()
    in_logs = killed_writer(feature / "logs" / "iteration-9.patch", ralph_env)

    run_once(ralph)

    assert not in_folder.exists() and not in_logs.exists()
    assert list(feature.glob(".tmp-*")) == []


def test_a_writer_still_at_work_keeps_its_temporary_file_and_finishes(
    feature: Path, ralph: RalphRunner, stopped_writer: subprocess.Popen[bytes]
) -> None:
    # the writer's own status.json write is what it renames: the run's own status.json is written meanwhile
    temporary = only_temp(feature)

    run_once(ralph)

    assert temporary.exists()
    stopped_writer.send_signal(signal.SIGCONT)
    assert stopped_writer.wait(timeout=30) == 0
    assert (feature / "status.json").read_text() == "written\n"


def test_only_ralphs_own_temporary_files_go_and_an_old_one_whatever_its_pid(
    feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    reused = feature / f".tmp-{os.getpid()}-abcdefgh"  # a live PID: this test's, as a reused PID would be
    older = feature / ".tmp-abcd1234"  # an older ralph's name, with no PID in it
    fresh_older = feature / ".tmp-zyxw9876"
    for path in (reused, older, fresh_older):
        path.write_text("half")
    os.utime(reused, (OLD, OLD))
    os.utime(older, (OLD, OLD))
    theirs = [feature / ".tmp-notes.txt", feature / ".tmp-1-abcdefghi"]  # not mkstemp's eight characters
    for path in theirs:
        path.write_text("the user's")
        os.utime(path, (OLD, OLD))
    folder = feature / ".tmp-1-abcdefgh"
    folder.mkdir()
    link = feature / ".tmp-2-abcdefgh"
    link.symlink_to(feature / "prd.json")

    run_once(ralph)

    assert not reused.exists() and not older.exists()
    assert fresh_older.exists()  # its writer may be at work: no PID says otherwise
    assert all(path.read_text() == "the user's" for path in theirs)
    assert folder.is_dir() and link.is_symlink()


def test_a_workspace_at_the_root_never_sweeps_the_users_own_files_there(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """A prd.json at the project root: its folder is the user's whole project, so ralph sweeps its own folders (.ralph/
    and its logs/) and, at the root, only names with its mark: an old `.tmp-abcd1234` of the user's looks like an older
    ralph's."""
    write_prd(project, 3)
    dead = subprocess.Popen([PYTHON, "-c", "pass"])  # its PID: a writer's that is gone
    dead.wait()
    theirs = [project / ".tmp-abcd1234", project / f".tmp-{dead.pid}-abcdefgh"]
    for path in theirs:
        path.write_text("the user's")
        os.utime(path, (OLD, OLD))
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-qm", "a plan at the root, and the user's files")
    (project / ".ralph").mkdir()
    in_state = killed_writer(project / ".ralph" / "state.json", ralph_env)
    killed = subprocess.run(
        [PYTHON, "-c", WRITER, str(project / "progress.txt"), "SIGKILL"], check=False, env=ralph_env
    )
    assert killed.returncode == -signal.SIGKILL
    (at_root,) = set(project.glob(".tmp-ralph-*"))  # ralph's own, marked: a root goal's PROGRESS.yaml, progress.txt

    done = ralph("run", ".", "-n", "1", "--agent-cmd", agent_cmd("say.py", "working"))

    assert done.returncode == 1 and "max_iterations" in done.stdout, done.stdout + done.stderr
    assert not in_state.exists()  # ralph's own folder is still swept
    assert not at_root.exists()  # and its own marked files at the root
    assert all(path.read_text() == "the user's" for path in theirs)
    assert git(project, ralph_env, "status", "--porcelain", "--", *(path.name for path in theirs)) == ""


# ---------------------------------------------------------------- the private index's lock


PRIVATE_LOCK = Path(".git") / "ralph" / "feat.index.lock"


def git_waiting(project: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A git process alive in the project until the test ends (it waits on its stdin), holding no lock."""
    return subprocess.Popen(["git", "cat-file", "--batch"], cwd=project, env=env, stdin=subprocess.PIPE)


@pytest.fixture
def committed(project: Path, feature: Path, ralph_env: dict[str, str]) -> Path:
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-qm", "feature")
    (project / ".git" / "ralph").mkdir()
    (project / PRIVATE_LOCK).write_text("")  # ralph killed while one of its git commands held it
    return feature


def test_a_stale_private_index_lock_goes_though_another_git_works_in_the_repository(
    project: Path, committed: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    other = git_waiting(project, ralph_env)  # an editor's git, a `git log` in a pager
    try:
        done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "working"))
    finally:
        other.kill()
        other.wait()

    out = done.stdout + done.stderr
    assert done.returncode == 1 and "max_iterations" in done.stdout, out
    assert f"removed the stale git lock {PRIVATE_LOCK}" in done.stdout, out
    assert "no git process uses ralph's private index" in done.stdout, out
    assert not (project / PRIVATE_LOCK).exists()
