"""A run killed at any instant is finished by the next one (issue 20, items 2, 3 and 10): what its agent left
running is stopped before anything else starts, the iteration is recorded once, and its work is committed or
saved-and-undone by its task's state. Every test kills the real `ralph run` with SIGKILL (the agent does it, as
an OOM kill would), then runs `ralph run` again."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import (
    entry_fields,
    git,
    killed_journal,
    pid_alive,
    progress_entries,
    read_pid,
    wait_dead,
    wait_until,
)

KILLED = "ralph was killed during this iteration"


def _crash(*args: str) -> str:
    return agent_cmd("crash_agent.py", *args)


def _metrics(feature: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines() if line.strip()]


def _entries(feature: Path) -> dict[int, dict[str, str]]:
    found: dict[int, dict[str, str]] = {}
    for entry in progress_entries((feature / "progress.txt").read_text()):
        fields = entry_fields(entry)
        number = int(fields["Iteration"])
        assert number not in found, f"iteration {number} recorded twice"
        found[number] = fields
    return found


def _commit_feature(project: Path, env: dict[str, str]) -> None:
    git(project, env, "add", "-A")
    git(project, env, "commit", "-qm", "feature")


def test_an_agent_left_running_by_a_killed_ralph_is_stopped_and_its_unfinished_work_saved_and_undone(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    _commit_feature(project, ralph_env)
    agent_pid, daemon_pid = tmp_path / "agent.pid", tmp_path / "daemon.pid"
    killed = ralph(
        "run",
        "-n",
        "1",
        "--agent-cmd",
        _crash("--write", "half.txt=half done", "--pidfile", str(agent_pid), "--daemon", str(daemon_pid))
        + " --kill-ralph --hang",
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert wait_until(lambda: read_pid(daemon_pid) is not None)
    orphans = [read_pid(agent_pid), read_pid(daemon_pid)]
    assert all(pid is not None and pid_alive(pid) for pid in orphans)  # ralph's death alone stops nothing
    journal = read_json(feature / ".iteration.json")
    assert journal["number"] == 1 and journal["phase"] == "agent" and journal["pid"] == orphans[0]

    again = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "second"))

    assert again.returncode == 1, again.stdout + again.stderr  # 1: max iterations, after a real iteration
    assert all(pid is not None and wait_dead(pid) for pid in orphans)
    assert f"iteration 1: {KILLED}" in again.stdout + again.stderr
    entries = _entries(feature)
    assert sorted(entries) == [1, 2]
    first = entries[1]
    assert first["Status"] == "interrupted"
    assert KILLED in first["Note"] and "its task is not done" in first["Note"]
    assert "2 process(es) running" in first["Note"]
    assert "interrupted attempt saved as refs/ralph/attempts/feat/iteration-1" in first["Note"]
    assert not (project / "half.txt").exists()  # undone ...
    saved = git(project, ralph_env, "show", "refs/ralph/attempts/feat/iteration-1:half.txt")
    assert saved == "half done\n"  # ... and saved first
    metrics = _metrics(feature)
    assert [line["iteration"] for line in metrics] == [1, 2]
    assert metrics[0]["outcome"] == "interrupted" and metrics[0]["counted"] is False
    assert not (feature / ".iteration.json").exists()
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"


def test_work_whose_task_was_marked_done_is_committed_after_the_kill(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    _commit_feature(project, ralph_env)
    cmd = _crash("--write", "s1.txt=story one", "--pass", "S-1", "--kill-ralph")
    killed = ralph("run", "-n", "1", "--agent-cmd", cmd, env={"RALPH_AUTO_COMMIT": "true"})
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert "s1.txt" in git(project, ralph_env, "status", "--porcelain")  # the kill left it uncommitted

    again = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "next"), env={"RALPH_AUTO_COMMIT": "true"})

    assert again.returncode == 1, again.stdout + again.stderr
    log = git(project, ralph_env, "log", "--format=%s", "--name-only", "-n", "3")
    assert log.startswith("S-1: Story 1\n"), log
    assert "s1.txt" in log and "prd.json" in log
    assert "s1.txt" not in git(project, ralph_env, "status", "--porcelain")
    stories = read_json(feature / "prd.json")["userStories"]
    assert stories[0]["passes"] is True  # the mark is kept with the work
    first = _entries(feature)[1]
    assert first["Status"] == "interrupted"
    assert "S-1 was marked done: its work is kept" in first["Note"]
    assert "changes committed by ralph" in first["Note"]


def test_a_kill_during_ralphs_commit_is_finished_without_recording_twice(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    _commit_feature(project, ralph_env)
    marker = tmp_path / "killed-once"
    hook = project / ".git" / "hooks" / "pre-commit"
    # git runs the hook during ralph's auto-commit, after the iteration's records: the hook kills ralph (git's
    # parent) once, the worst moment for the records and the commit.
    hook.write_text(
        "#!/bin/sh\n"
        f'[ -e "{marker}" ] && exit 0\n'
        f'touch "{marker}"\n'
        "ralph=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
        'kill -9 "$ralph"\n'
        "sleep 5\n"
    )
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    cmd = agent_cmd("story_agent.py", "--no-commit")
    env = {"RALPH_AUTO_COMMIT": "true"}
    killed = ralph("run", "-n", "1", "--agent-cmd", cmd, env=env)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert marker.exists()
    assert read_json(feature / ".iteration.json")["phase"] == "recording"

    again = ralph("run", "-n", "1", "--agent-cmd", cmd, env=env)

    assert again.returncode == 1, again.stdout + again.stderr
    entries = _entries(feature)  # asserts no iteration is recorded twice
    assert sorted(entries) == [1, 2]
    assert entries[1]["Status"] == "complete"
    assert [line["iteration"] for line in _metrics(feature)] == [1, 2]
    subjects = git(project, ralph_env, "log", "--format=%s", "-n", "3").splitlines()
    assert subjects[:2] == ["S-2: Story 2", "S-1: Story 1"], subjects
    assert git(project, ralph_env, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_daemon_the_agent_leaves_behind_is_stopped_when_it_exits(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    daemon_pid, child_pid = tmp_path / "daemon.pid", tmp_path / "child.pid"

    done = ralph("run", "-n", "1", "--agent-cmd", _crash("--daemon", str(daemon_pid)))

    assert done.returncode == 1, done.stdout + done.stderr
    daemon = read_pid(daemon_pid)
    assert daemon is not None and wait_dead(daemon)
    entry = _entries(feature)[1]
    assert "the agent left 1 process(es) running after it ended; ralph stopped them" in entry["Note"]
    assert read_pid(child_pid) is None


def test_a_pid_reused_by_another_process_is_never_signalled(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str]
) -> None:
    stranger = subprocess.Popen(["sleep", "300"])
    try:
        killed = ralph("run", "-n", "1", "--agent-cmd", _crash("--kill-ralph", "--hang"))
        assert killed.returncode == -9
        journal_path = feature / ".iteration.json"
        journal = read_json(journal_path)
        assert pid_alive(journal["pid"])  # the orphaned agent still runs
        os.kill(journal["pid"], 9)
        assert wait_dead(journal["pid"])
        journal["pid"] = stranger.pid  # as if the agent's PID now named another process
        journal_path.write_text(json.dumps(journal))

        again = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "again"))

        assert again.returncode == 1, again.stdout + again.stderr
        assert stranger.poll() is None  # not ours: its start time says so
    finally:
        stranger.kill()
        stranger.wait()


def test_an_unreadable_journal_is_set_aside_and_told(project: Path, feature: Path, ralph: RalphRunner) -> None:
    (feature / ".iteration.json").write_text('{"number": "one"}')

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi"))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "not an iteration journal" in done.stdout + done.stderr
    assert not (feature / ".iteration.json").exists()
    moved = list((feature / "logs").glob("journal-unreadable-*.json"))
    assert len(moved) == 1 and moved[0].read_text() == '{"number": "one"}'


def test_a_fifo_in_place_of_the_journal_is_refused_in_one_line_without_hanging(
    project: Path, feature: Path, ralph: RalphRunner
) -> None:
    os.mkfifo(feature / ".iteration.json")

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi"), timeout=60)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "not a regular file" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    # Bad input leaves every file as it was: the FIFO stays for the user to look at.
    assert stat.S_ISFIFO((feature / ".iteration.json").lstat().st_mode)


def test_a_kill_before_state_json_reserved_the_number_never_gives_two_iterations_one_number(
    project: Path, feature: Path, ralph: RalphRunner
) -> None:
    """Found by the chaos suite (a second Ctrl+C as iteration 2 began): the journal named iteration 2, state.json
    still said 1, and the next run recorded the killed iteration 2 and then ran its own iteration 2."""
    assert ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "first")).returncode == 1
    journal = killed_journal(2, "S-1", "Story 1")
    (feature / ".iteration.json").write_text(json.dumps(journal))
    assert read_json(feature / "state.json")["iteration"] == 1

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "third"))

    assert done.returncode == 1, done.stdout + done.stderr
    entries = _entries(feature)  # asserts no iteration is recorded twice
    assert sorted(entries) == [1, 2, 3], sorted(entries)
    assert entries[2]["Status"] == "interrupted" and entries[3]["Status"] != "interrupted"
    assert [line["iteration"] for line in _metrics(feature)] == [1, 2, 3]
    assert (feature / "logs" / "iteration-3.log").exists()


def test_a_task_file_torn_by_an_agent_killed_with_ralph_is_mended_by_the_next_runs_undo(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """Found by the chaos suite (ralph and its agent killed at once, the agent writing prd.json in place): the
    next run refused the torn prd.json before it settled the killed iteration, whose undo puts it back."""
    _commit_feature(project, ralph_env)
    killed = ralph("run", "-n", "1", "--agent-cmd", _crash("--write", ".ralph/feat/prd.json=", "--kill-ralph"))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert (feature / "prd.json").read_text() == "\n"  # torn
    # before the next run mends it, `ralph status` answers with the last counts and says why (the user's own
    # broken prd.json, with no iteration cut short, is still an error: test_status.py)
    status = ralph("status", "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["note"].endswith(
        "; .ralph/feat/prd.json:2: invalid JSON at column 1: Expecting value; the counts are the last iteration's"
    )
    assert (report["storiesComplete"], report["storiesTotal"]) == (0, 3)
    assert "invalid JSON at column 1" in ralph("status").stdout

    again = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("story_agent.py", "--no-commit"))

    assert again.returncode == 1, again.stdout + again.stderr  # max iterations, after a real iteration
    assert "invalid JSON" in _entries(feature)[1]["Note"]  # why the killed iteration was undone
    stories = read_json(feature / "prd.json")["userStories"]
    assert [story["passes"] for story in stories] == [True, False, False]
    assert git(project, ralph_env, "show", "refs/ralph/attempts/feat/iteration-1:.ralph/feat/prd.json") == "\n"


def test_a_process_that_daemonises_as_ralph_stops_it_is_stopped_too(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    """Found by the chaos suite (1 in ~100 agent kills): a process stopped while it daemonised started its
    child between ralph's look for what the agent left and its signal; that child ran on."""
    grandchild = tmp_path / "grandchild.pid"

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("spawn_on_term.py", str(grandchild)))

    assert done.returncode == 1, done.stdout + done.stderr
    assert wait_until(lambda: read_pid(grandchild) is not None)
    pid = read_pid(grandchild)
    assert pid is not None and wait_dead(pid), f"PID {pid} still running"
