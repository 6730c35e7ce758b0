"""Steering a running loop from another terminal (issue 36): `ralph pause`, `resume`, `stop [--now]` and `say`, with
the real `ralph run` in the background, a real agent the test paces (tests/agents/steered_agent.py: it waits for a
gate file per iteration) and real git. What the loop did is read where a user reads it: `ralph status`, the exit
code, progress.txt, events.jsonl, the agent's own log of its prompts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import PYTHON, RalphRunner, agent_cmd, read_json
from tests.integration.helpers import git, parallel_feature, pid_alive, start_parallel, wait_until
from tests.integration.test_reports_true import prepared


def parallel_paced(project: Path, env: dict[str, str], tmp_path: Path, count: int) -> tuple[Path, Path, Path]:
    """A feature of `count` stories for `ralph run --parallel`, and the paced agent's log and gates folder."""
    stories = [{"id": f"S-{n}", "title": f"story {n}", "priority": n, "passes": False} for n in range(1, count + 1)]
    folder = parallel_feature(project, env, stories)
    (tmp_path / "gates").mkdir()
    return folder, tmp_path / "agent.log", tmp_path / "gates"


class Paced:
    """The agent's log and gates: what it did, and letting iteration N end."""

    def __init__(self, tmp_path: Path, prd: Path) -> None:
        self.log = tmp_path / "agent.log"
        self.gates = tmp_path / "gates"
        self.gates.mkdir()
        self.command = agent_cmd("steered_agent.py", str(self.log), str(self.gates), str(prd))

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def started(self, number: int) -> bool:
        return f"started {number}" in self.lines()

    def release(self, number: int) -> None:
        (self.gates / str(number)).touch()


@contextmanager
def running(project: Path, env: dict[str, str], *args: str) -> Iterator[subprocess.Popen[str]]:
    """`ralph run ARGS` in the background (its own session, as from a terminal); killed at the end if alive."""
    proc = subprocess.Popen(
        [PYTHON, "-m", "ralphloop", "run", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def status_json(ralph: RalphRunner) -> dict[str, object]:
    done = ralph("status", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert isinstance(found, dict)
    return found


def events(folder: Path) -> list[str]:
    path = folder / "events.jsonl"
    return [json.loads(line)["text"] for line in path.read_text().splitlines()] if path.exists() else []


def test_pause_holds_the_next_iteration_say_reaches_one_prompt_resume_goes_on_and_stop_ends_after_the_iteration(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 5)
    agent = Paced(tmp_path, folder / "prd.json")
    with running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as loop:
        assert wait_until(lambda: agent.started(1)), agent.lines()

        paused = ralph("pause")
        assert paused.returncode == 0, paused.stderr
        assert (
            paused.stdout.strip() == "ralph: feat: paused: no new iteration starts (the running one finishes); "
            "`ralph resume -f feat` goes on"
        )
        agent.release(1)  # the running one finishes ...
        assert wait_until(lambda: status_json(ralph)["status"] == "paused"), status_json(ralph)
        assert "Paused:     paused by you at" in ralph("status").stdout
        said = ralph("say", "use", "the blue widget")
        assert said.returncode == 0, said.stderr
        assert not wait_until(lambda: agent.started(2), limit=1.5)  # ... and no new one starts while paused

        assert ralph("resume").returncode == 0
        assert wait_until(lambda: agent.started(2)), agent.lines()
        assert [line for line in agent.lines() if line.startswith("guidance")] == [
            line for line in agent.lines() if line.startswith("guidance 2: ")
        ]
        assert any(line.endswith("] use the blue widget") for line in agent.lines() if line.startswith("guidance 2"))
        agent.release(2)
        assert wait_until(lambda: agent.started(3)), agent.lines()
        assert not any(line.startswith("guidance 3") for line in agent.lines())  # once

        stopping = ralph("stop")
        assert stopping.returncode == 0, stopping.stderr
        agent.release(3)
        loop.wait(timeout=60)
        out, err = loop.communicate()

    assert loop.returncode == 3, out + err
    assert "ended 3" in agent.lines() and not agent.started(4)  # after the iteration, not during it
    status = read_json(folder / "status.json")
    assert (status["status"], status["exitReason"]) == ("stopped", "stopped")
    progress = (folder / "progress.txt").read_text()
    assert progress.count("Guidance from the user (cli, ") == 1 and "): use the blue widget" in progress
    told = events(folder)
    for words in ("paused by you at", "resumed by you at", "guidance received: said by you at", "stopped by you at"):
        assert any(words in line for line in told), (words, told)
    assert not (folder / "control.json").exists() or read_json(folder / "control.json")["guidance"] == []


def test_stop_now_interrupts_the_iteration_saves_the_attempt_and_undoes_it(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 2)
    agent = Paced(tmp_path, folder / "prd.json")
    with running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as loop:
        assert wait_until((project / "work-1.txt").exists), agent.lines()
        stopping = ralph("stop", "--now")
        assert stopping.returncode == 0, stopping.stderr
        assert ralph("stop", "--now").returncode == 0  # asked again (a retry, a second phone): no second Ctrl+C
        loop.wait(timeout=60)
        out, err = loop.communicate()

    assert loop.returncode == 3, out + err
    assert (read_json(folder / "status.json")["exitReason"]) == "stopped"
    assert not (project / "work-1.txt").exists()  # undone ...
    saved = git(project, ralph_env, "for-each-ref", "--format=%(refname)", "refs/ralph/attempts/")
    assert saved.strip(), "the attempt was not saved"  # ... after it was saved
    assert any("stopped at once by you at" in line for line in events(folder)), events(folder)


def test_a_pause_survives_a_killed_ralph_and_the_next_run_starts_paused(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 3)
    agent = Paced(tmp_path, folder / "prd.json")
    with running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as first:
        assert wait_until(lambda: agent.started(1)), agent.lines()
        assert ralph("pause").returncode == 0
        agent.release(1)
        assert wait_until(lambda: status_json(ralph)["status"] == "paused")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        assert not pid_alive(first.pid)

    with running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as second:
        assert wait_until(lambda: status_json(ralph)["status"] == "paused"), status_json(ralph)
        assert not wait_until(lambda: agent.started(2), limit=1.5)
        assert ralph("resume").returncode == 0
        assert wait_until(lambda: agent.started(2)), agent.lines()
        assert ralph("stop").returncode == 0
        agent.release(2)
        second.wait(timeout=60)
    assert second.returncode == 3


def test_a_command_for_a_loop_not_running_or_from_an_agent_is_one_line_and_writes_nothing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    folder = prepared(project, ralph_env, ralph, 1)
    for words in (("pause",), ("resume",), ("stop",), ("stop", "--now"), ("say", "hi"), ("answer", "yes")):
        done = ralph(*words)
        assert done.returncode == 1
        assert (
            done.stderr.strip() == f"ralph: error: ralph {words[0]}: no loop is running for feat; nothing was written"
        )
    marked = ralph("pause", env={"RALPH_AGENT": "1"})
    assert marked.returncode == 1
    assert marked.stderr.strip().splitlines() == [
        "ralph: error: ralph pause: refused: this runs in an agent's process ($RALPH_AGENT is set); an agent "
        "cannot steer the loop it runs in"
    ]
    bare = ralph("say")
    assert (bare.returncode, bare.stderr.strip()) == (
        1,
        "ralph: error: the following arguments are required: TEXT (see 'ralph say --help')",
    )
    blank = ralph("say", "  ", "\x1b[31m")
    assert blank.stderr.strip() == "ralph: error: ralph say: TEXT is empty (usage: ralph say TEXT)"
    assert not (folder / "control.json").exists()


def test_a_loop_that_needs_a_human_waits_for_an_answer_which_reaches_the_next_prompt(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 3)
    agent = Paced(tmp_path, folder / "prd.json")
    env = {**ralph_env, "STEER_ASK": "1", "RALPH_QUESTION_WAIT": "10m"}
    with running(project, env, "--no-archive", "--agent-cmd", agent.command) as loop:
        assert wait_until(lambda: status_json(ralph)["status"] == "waiting"), status_json(ralph)
        waiting = read_json(folder / "status.json")["waiting"]
        assert waiting["kind"] == "answer"
        assert "which database?" in waiting["message"] and "(ralph answer TEXT)" in waiting["message"]
        assert "waiting for your answer (ralph answer TEXT) until" in ralph("status").stdout

        answered = ralph("answer", "use", "postgres")
        assert answered.returncode == 0, answered.stderr
        assert wait_until(lambda: agent.started(2)), agent.lines()
        assert any(
            line.endswith("] the user's answer to the question you asked: use postgres")
            for line in agent.lines()
            if line.startswith("guidance 2: ")
        ), agent.lines()
        assert ralph("stop").returncode == 0
        agent.release(2)
        loop.wait(timeout=60)
    assert loop.returncode == 3
    assert "Answer from the user (cli, " in (folder / "progress.txt").read_text()
    assert any("answer received: answered by you at" in line for line in events(folder)), events(folder)
    again = ralph("answer", "too late")
    assert again.returncode == 1 and "no loop is running" in again.stderr


def test_nobody_answering_in_time_halts_as_before_and_on_question_halt_at_once(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 2)
    agent = Paced(tmp_path, folder / "prd.json")
    env = {"STEER_ASK": "*", "RALPH_QUESTION_WAIT": "2s"}
    timed = ralph("run", "--no-archive", "--agent-cmd", agent.command, env=env)
    assert timed.returncode == 1, timed.stdout + timed.stderr
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "needs_human" and "which database?" in status["exitMessage"]
    assert any("waiting for your answer" in line for line in events(folder))

    env["RALPH_QUESTION_WAIT"] = "8h"
    at_once = ralph("run", "--no-archive", "--on-question", "halt", "--agent-cmd", agent.command, env=env)
    assert at_once.returncode == 1
    assert read_json(folder / "status.json")["exitReason"] == "needs_human"


def test_answer_refuses_a_loop_that_waits_on_no_question(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 3)
    agent = Paced(tmp_path, folder / "prd.json")
    with running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as loop:
        assert wait_until(lambda: agent.started(1)), agent.lines()
        refused = ralph("answer", "yes")
        assert (refused.returncode, refused.stderr.strip()) == (
            1,
            "ralph: error: ralph answer: the loop of feat waits on no question; nothing was written",
        )
        assert not (folder / "control.json").exists()
        assert ralph("stop", "--now").returncode == 0
        loop.wait(timeout=60)


def test_a_parallel_run_paused_as_a_whole_starts_no_new_loop_until_resumed_and_story_names_one_loop(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder, log, gates = parallel_paced(project, ralph_env, tmp_path, 3)
    command = agent_cmd("steered_agent.py", str(log), str(gates), "loop")

    def started(story: str) -> bool:
        return log.exists() and f"task {story} started 1" in log.read_text()

    run = start_parallel(project, ralph_env, "2", "--agent-cmd", command)
    try:
        assert wait_until(lambda: started("S-1") and started("S-2")), log.read_text() if log.exists() else ""
        unknown = ralph("pause", "--story", "S-9")
        assert unknown.returncode == 1 and "--story S-9: no loop of feat's parallel run has it" in unknown.stderr
        one = ralph("say", "--story", "S-2", "only for two")
        assert one.returncode == 0 and one.stdout.startswith("ralph: feat story S-2: said:"), one.stderr

        paused = ralph("pause")
        assert paused.returncode == 0, paused.stderr
        assert "paused: no new loop starts, and its 2 running loop(s) start no new iteration" in paused.stdout
        (gates / "1").touch()  # both loops pass their story; S-3 is ready, and must wait
        assert wait_until(lambda: read_json(folder / "fleet.json").get("steered", "") or False)
        assert read_json(folder / "fleet.json")["steered"].startswith("paused by you at")
        assert wait_until(lambda: read_json(folder / "fleet.json")["storiesMerged"] == 2, limit=60)
        assert not wait_until(lambda: started("S-3"), limit=2)
        assert "paused by you at" in ralph("status").stdout

        assert ralph("resume").returncode == 0
        assert wait_until(lambda: started("S-3"), limit=30)
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, out
    assert "✋ paused by you at" in out and "✋ resumed: loops start again" in out
    assert read_json(folder / "fleet.json")["storiesMerged"] == 3


def test_a_parallel_run_stopped_as_a_whole_ends_stopped_once_its_loops_end_after_their_iteration(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder, log, gates = parallel_paced(project, ralph_env, tmp_path, 3)
    run = start_parallel(project, ralph_env, "2", "--agent-cmd", agent_cmd("steered_agent.py", str(log), str(gates)))
    try:  # the agent passes no story: each loop would go on, iteration after iteration
        assert wait_until(lambda: log.exists() and log.read_text().count("task S-") == 2)
        stopping = ralph("stop")
        assert stopping.returncode == 0 and "its 2 running loop(s) end after their iteration" in stopping.stdout
        (gates / "1").touch()
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 3, out
    fleet = read_json(folder / "fleet.json")
    assert (fleet["status"], fleet["exitReason"]) == ("stopped", "stopped")
    assert "task S-3" not in log.read_text()  # no new loop started
    assert "started 2" not in log.read_text()  # and none went on past its iteration
    assert [loop["state"] for loop in fleet["loops"]] == ["stopped", "stopped"]


def test_stop_ends_a_long_wait_for_a_usage_limit_at_once(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """The agent hits a usage limit that resets in 2030: the loop would wait years; `ralph stop` ends it now."""
    folder = prepared(project, ralph_env, ralph, 2)
    limited = agent_cmd("limit_once.py", str(tmp_path / "marker"), "Claude AI usage limit reached|1893456000")
    with running(project, ralph_env, "--no-archive", "--on-usage-limit", "wait", "--agent-cmd", limited) as loop:
        assert wait_until(lambda: status_json(ralph)["status"] == "waiting"), status_json(ralph)
        assert ralph("stop").returncode == 0
        loop.wait(timeout=30)
    assert loop.returncode == 3
    status = read_json(folder / "status.json")
    assert (status["status"], status["exitReason"]) == ("stopped", "stopped")
    assert any(line.startswith("stopped by you at") for line in events(folder)), events(folder)


def test_stop_ends_the_wait_for_start_at_at_once(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    from datetime import datetime, timedelta

    folder = prepared(project, ralph_env, ralph, 2)
    agent = Paced(tmp_path, folder / "prd.json")
    later = (datetime.now() + timedelta(hours=2)).strftime("%H:%M")
    with running(project, ralph_env, "--no-archive", "--start-at", later, "--agent-cmd", agent.command) as loop:
        assert wait_until(lambda: status_json(ralph)["status"] == "waiting"), status_json(ralph)
        assert ralph("stop").returncode == 0
        loop.wait(timeout=30)
    assert loop.returncode == 3 and not agent.started(1)
    assert read_json(folder / "status.json")["exitReason"] == "stopped"


def test_a_story_whose_loop_you_stopped_is_not_started_again_and_the_run_says_so(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder, log, gates = parallel_paced(project, ralph_env, tmp_path, 2)
    env = {**ralph_env, "STEER_KEEP": "S-1"}  # S-1's loop would go on: it never passes its story
    agent = agent_cmd("steered_agent.py", str(log), str(gates), "loop")
    run = start_parallel(project, env, "2", "--agent-cmd", agent)
    try:
        assert wait_until(lambda: log.exists() and log.read_text().count("task S-") == 2)
        assert ralph("stop", "--story", "S-1").returncode == 0
        (gates / "1").touch()  # S-2 passes and merges; S-1's loop ends after its iteration
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    fleet = read_json(folder / "fleet.json")
    assert run.returncode == 3, out
    assert (fleet["exitReason"], fleet["exitMessage"], fleet["storiesMerged"]) == ("stopped", "stopped by you: S-1", 1)
    assert log.read_text().count("task S-1 started") == 1  # never started again
