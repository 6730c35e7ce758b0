"""Lifecycle hooks and quality gates, in-process: runs built as `ralph run` builds them, their agents played back
(harness.py), real git, and real hook and gate commands.

`hooks:` in .ralph/config.yaml runs user commands (`sh -c`, in the project root) at pre_run, pre_iteration,
post_iteration and at the end (on_complete, on_error, on_halt), with the run's values in the environment.
A failing hook is only a warning, except post_iteration's exit 75, "verification failed": that iteration is
not progress, and a story it claimed does not pass. `quality_checks:` run after an iteration that claims a
story or completion: a story passes, and the loop completes, only when every gate passes; a failed gate makes
the attempt a failed one (saved, undone, retried) and its output goes into the next prompt.

The hooks and gates record what they saw in files under tmp_path, outside the repository, so that undoing a
failed attempt keeps the record. The CLI's side (a bad section's one-line error, a hook stopped at its real
timeout) is tests/integration/test_hooks_gates.py's.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json, write_prd
from tests.engine.harness import STORY, Ran, Turn, Turns, entries, git_out, ralph, run
from tests.integration.helpers import set_config

REF = "refs/ralph/attempts/feat/iteration-{}"
# One line per hook run: what it was told, and where it ran. `-` stands for a variable that is not set.
FIELDS = (
    "RALPH_EVENT",
    "RALPH_ITERATION",
    "RALPH_TASK_ID",
    "ITERATION",
    "PHASE_ID",
    "SPRINT_ID",
    "RALPH_FEATURE",
    "RALPH_FEATURE_DIR",
    "ITERATION_TRANSCRIPT",
    "RALPH_EXIT_REASON",
    "RALPH_EXIT_CODE",
    "RALPH_EXIT_MESSAGE",
    "PWD",
)
END_EVENTS = ("on_complete", "on_error", "on_halt")
GATE_MESSAGE = "FAILED test_login: expected 200"


def configure(project: Path, **sections: Any) -> None:
    """Add top-level sections to the .ralph/config.yaml `ralph init` wrote (it has no hooks or gates yet)."""
    with (project / ".ralph" / "config.yaml").open("a", encoding="utf-8") as handle:
        handle.write("\n" + yaml.safe_dump(sections, sort_keys=False))


def recorder(events: Path) -> str:
    """A hook command that appends its environment to `events`, one `|`-separated line, and says hello."""
    formats = "|".join(["%s"] * len(FIELDS))
    values = " ".join(f'"${{{name}--}}"' for name in FIELDS)
    return f"printf '{formats}\\n' {values} >> {shlex.quote(str(events))}; echo \"hello from $RALPH_EVENT\""


def recorded(events: Path) -> list[dict[str, str]]:
    if not events.exists():
        return []
    return [dict(zip(FIELDS, line.split("|"), strict=True)) for line in events.read_text().splitlines()]


def every_event(events: Path) -> dict[str, str | list[str]]:
    return {event: recorder(events) for event in ("pre_run", "pre_iteration", "post_iteration", *END_EVENTS)}


def flaky(tmp_path: Path, name: str, message: str, *, failures: int = 1, code: int = 1) -> tuple[str, Path]:
    """A command that fails (printing `message`, exiting `code`) its first `failures` runs and passes after.

    Returns the command and the file where each run appends `EVENT TASK ITERATION` (its count is the run's)."""
    runs = tmp_path / f"{name}.runs"
    script = tmp_path / f"{name}.sh"
    script.write_text(
        f"n=$(( $(cat {shlex.quote(str(runs))} 2>/dev/null | wc -l) + 1 ))\n"
        f'echo "$RALPH_EVENT $RALPH_TASK_ID $RALPH_ITERATION" >> {shlex.quote(str(runs))}\n'
        f'if [ "$n" -le {failures} ]; then echo {shlex.quote(message)}; exit {code}; fi\n'
        'echo "passed on run $n"\n'
    )
    return f"sh {shlex.quote(str(script))}", runs


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def passes(feature: Path) -> dict[str, bool]:
    return {story["id"]: story["passes"] for story in read_json(feature / "prd.json")["userStories"]}


def fail_marks(feature: Path) -> list[str]:
    return [line for line in (feature / "progress.txt").read_text().splitlines() if line.startswith("[FAIL]")]


def exit_code(done: Ran) -> int:
    """What `ralph run` would have exited with."""
    return done.outcome.reason.exit_code


# ---------------------------------------------------------------- the lifecycle


def test_lifecycle_hooks_run_in_order_with_their_variables(project: Path, feature: Path, tmp_path: Path) -> None:
    write_prd(feature, 2)
    events = tmp_path / "events.txt"
    hooks = every_event(events)
    hooks["pre_run"] = [recorder(events), "echo second pre_run command"]  # a list runs in order
    configure(project, hooks=hooks)

    done = run(project, Turns(then=STORY))

    assert exit_code(done) == 0, done.screen
    seen = recorded(events)
    logs = feature / "logs"
    order = [(row["RALPH_EVENT"], row["RALPH_ITERATION"], row["RALPH_TASK_ID"]) for row in seen]
    assert order == [
        ("pre_run", "0", "S-1"),
        ("pre_iteration", "1", "S-1"),
        ("post_iteration", "1", "S-1"),
        ("pre_iteration", "2", "S-2"),
        ("post_iteration", "2", "S-2"),
        ("on_complete", "2", "S-2"),
    ]
    for row in seen:
        # Outside goal mode ITERATION is the iteration and PHASE_ID the task; SPRINT_ID is the feature.
        assert (row["ITERATION"], row["PHASE_ID"]) == (row["RALPH_ITERATION"], row["RALPH_TASK_ID"])
        assert row["SPRINT_ID"] == row["RALPH_FEATURE"] == "feat"
        assert os.path.samefile(row["RALPH_FEATURE_DIR"], feature)
        assert os.path.samefile(row["PWD"], project)
        if row["RALPH_EVENT"] == "pre_run":  # before the first iteration there is no log to name
            assert row["ITERATION_TRANSCRIPT"] == ""
        else:
            assert Path(row["ITERATION_TRANSCRIPT"]) == logs / f"iteration-{row['RALPH_ITERATION']}.log"
        if row["RALPH_EVENT"] != "on_complete":
            assert (row["RALPH_EXIT_REASON"], row["RALPH_EXIT_CODE"], row["RALPH_EXIT_MESSAGE"]) == ("-", "-", "-")
    end = seen[-1]
    assert (end["RALPH_EXIT_REASON"], end["RALPH_EXIT_CODE"]) == ("complete", "0")
    assert end["RALPH_EXIT_MESSAGE"] == read_json(feature / "status.json")["exitMessage"]
    # Each hook's output goes to its own log under logs/hooks/, named after the event and the iteration.
    hook_logs = logs / "hooks"
    for event, number in [(row[0], row[1]) for row in order]:
        assert (hook_logs / f"{event}-{number}.log").read_text() == f"hello from {event}\n"
    assert (hook_logs / "pre_run-2-0.log").read_text() == "second pre_run command\n"
    assert "hook pre_run: passed" in done.screen


def test_on_halt_is_told_max_iterations(project: Path, feature: Path, tmp_path: Path) -> None:
    events = tmp_path / "events.txt"
    configure(project, hooks=every_event(events))

    done = run(project, Turns(then=STORY), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS and exit_code(done) == 1, done.screen
    seen = recorded(events)
    assert [row["RALPH_EVENT"] for row in seen] == ["pre_run", "pre_iteration", "post_iteration", "on_halt"]
    halt = seen[-1]
    assert (halt["RALPH_EXIT_REASON"], halt["RALPH_EXIT_CODE"]) == ("max_iterations", "1")
    assert (halt["RALPH_ITERATION"], halt["RALPH_TASK_ID"]) == ("1", "S-1")
    assert halt["RALPH_EXIT_MESSAGE"] == read_json(feature / "status.json")["exitMessage"] != "-"


def test_on_error_when_the_agent_breaks_the_task_file(project: Path, feature: Path, tmp_path: Path) -> None:
    events = tmp_path / "events.txt"
    configure(project, hooks=every_event(events))
    broken = Turn(write={".ralph/feat/prd.json": "{ not json"}, say="tidied the task file\n")

    done = run(project, Turns(broken), n=3)

    assert exit_code(done) == 1, done.screen
    assert read_json(feature / "status.json")["exitReason"] == "error"
    seen = recorded(events)
    # post_iteration runs only after an iteration that ran clean (the task file readable, the agent not failed).
    assert [row["RALPH_EVENT"] for row in seen] == ["pre_run", "pre_iteration", "on_error"]
    error = seen[-1]
    assert (error["RALPH_EXIT_REASON"], error["RALPH_EXIT_CODE"]) == ("error", "1")
    assert "prd.json" in error["RALPH_EXIT_MESSAGE"], error


def test_failing_hooks_are_warnings_and_the_run_still_completes(project: Path, feature: Path, tmp_path: Path) -> None:
    write_prd(feature, 2)
    events = tmp_path / "events.txt"
    configure(
        project,
        hooks={
            "pre_run": ["echo 'pre_run broke' >&2; exit 1", "no-such-command-for-ralph-hooks", recorder(events)],
            "pre_iteration": ["exit 1", recorder(events)],
            "post_iteration": ["exit 2", recorder(events)],
            "on_complete": ["exit 1", recorder(events)],
        },
    )

    done = run(project, Turns(then=STORY))

    assert exit_code(done) == 0, done.screen
    assert read_json(feature / "status.json")["exitReason"] == "complete"
    assert passes(feature) == {"S-1": True, "S-2": True}
    # The commands after a failing one still ran, every time.
    assert [row["RALPH_EVENT"] for row in recorded(events)] == [
        "pre_run",
        *["pre_iteration", "post_iteration"] * 2,
        "on_complete",
    ]
    assert "hook pre_run: exit 1" in done.screen
    assert "hook pre_run#2: exit 127" in done.screen
    assert "hook pre_iteration: exit 1" in done.screen
    assert "hook post_iteration: exit 2" in done.screen
    assert "verification failed" not in done.screen
    assert "pre_run broke" in (feature / "logs" / "hooks" / "pre_run-0.log").read_text()
    assert [entry["Status"] for entry in entries(feature)] == ["complete", "complete"]


def test_a_feature_name_with_spaces_and_shell_syntax_reaches_a_hook_as_one_word(
    project: Path, home: Path, tmp_path: Path
) -> None:
    # `ralph init` refuses such a name, but `ralph run` works in a feature folder made by hand.
    assert ralph("init", "feat").code == 0
    name = "my feat; $(touch pwned) `touch pwned2` *"
    folder = project / ".ralph" / name
    os.rename(project / ".ralph" / "feat", folder)
    write_prd(folder, 1, branchName="feature/odd")
    words = tmp_path / "words.txt"
    quoted = shlex.quote(str(words))
    configure(
        project,
        hooks={
            # Unquoted on purpose: ralph quotes its hook variables itself.
            "pre_run": f"printf '[%s]\\n' $SPRINT_ID ${{SPRINT_ID}} >> {quoted}",
            "on_complete": f"printf '[%s]\\n' $ITERATION_TRANSCRIPT >> {quoted}",
        },
    )

    done = run(project, Turns(then=STORY), feature=name)

    assert exit_code(done) == 0, done.screen
    assert lines(words) == [f"[{name}]", f"[{name}]", f"[{folder / 'logs' / 'iteration-1.log'}]"]
    assert not (project / "pwned").exists() and not (project / "pwned2").exists()
    assert not (tmp_path / "pwned").exists()


# ---------------------------------------------------------------- post_iteration exit 75


@pytest.mark.parametrize("code", [75, 1])
def test_post_iteration_exit_75_makes_an_iteration_no_progress(
    project: Path, feature: Path, tmp_path: Path, code: int
) -> None:
    events = tmp_path / "events.txt"
    configure(
        project,
        hooks={
            "post_iteration": f"echo 'smoke test: the login page answers 500'; exit {code}",
            "on_halt": recorder(events),
        },
    )
    # Real work every iteration (a new file) and a story finished; the hook's verdict decides whether it stands.
    work = {"src/part-{n}.py": "part = {n}\n"}
    agent = Turns(*(Turn(write=work, say="wrote part {n}\n", passes=[story]) for story in ("S-1", "S-2")))

    done = run(project, agent, n=2)

    assert exit_code(done) == 1, done.screen
    reason = "max_iterations"
    assert read_json(feature / "status.json")["exitReason"] == reason
    assert [row["RALPH_EXIT_REASON"] for row in recorded(events)] == [reason]
    breaker = read_json(feature / ".circuit_breaker_state")
    second_prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    progress = (feature / "progress.txt").read_text()
    if code == 75:  # "verification failed": the story's claim does not stand, a failed attempt undone
        assert (breaker["consecutive_no_progress"], breaker["consecutive_failures"]) == (0, 2), breaker
        assert passes(feature) == {"S-1": False, "S-2": False, "S-3": False}
        assert not (project / "src").exists()
        assert "verification failed" in second_prompt, second_prompt
        assert "smoke test: the login page answers 500" in second_prompt
        assert "verification failed: post_iteration: exit 75 (verification failed)" in progress
        assert "hook post_iteration: exit 75 (verification failed)" in done.screen
    else:  # a hook that fails otherwise is a warning: the work stands
        assert (breaker["consecutive_no_progress"], breaker["consecutive_failures"]) == (0, 0), breaker
        assert passes(feature) == {"S-1": True, "S-2": True, "S-3": False}
        for n in (1, 2):
            assert (project / "src" / f"part-{n}.py").exists()
        assert "smoke test" not in second_prompt
        assert "verification failed" not in progress
        assert not fail_marks(feature)


def claim_then_look() -> Turns:
    """Iteration 1 finishes S-1 (a file, a commit, passes: true); iteration 2 only looks, changing nothing."""
    claim = Turn(write={"src/login.py": "ok = True\n"}, commit="feat: S-1", passes=["S-1"], say="S-1 done\n")
    return Turns(claim, Turn(say="looking around\n"))


def assert_claim_undone(project: Path, feature: Path, head: str) -> None:
    """Iteration 1's claim of S-1 did not stand: S-1 does not pass, the attempt was saved, then undone."""
    assert passes(feature) == {"S-1": False, "S-2": False, "S-3": False}
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "in-progress"]
    assert not (project / "src").exists()
    assert git_out(project, "rev-parse", "HEAD").strip() == head
    assert git_out(project, "show", f"{REF.format(1)}:src/login.py") == "ok = True\n"
    saved_prd = json.loads(git_out(project, "show", f"{REF.format(1)}:.ralph/feat/prd.json"))
    assert saved_prd["userStories"][0]["passes"] is True
    assert (feature / "logs" / "iteration-1.patch").is_file()
    second_prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert "attempt at S-1 failed" in second_prompt and "was undone" in second_prompt, second_prompt


def test_post_iteration_exit_75_refuses_the_story_it_claimed(project: Path, feature: Path, tmp_path: Path) -> None:
    head = git_out(project, "rev-parse", "HEAD").strip()
    verify, runs = flaky(tmp_path, "verify", "verify: S-1 broke the build", code=75)
    configure(project, hooks={"post_iteration": verify})

    done = run(project, claim_then_look(), n=2)

    assert exit_code(done) == 1, done.screen
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    assert lines(runs)[0] == "post_iteration S-1 1" and len(lines(runs)) == 2
    assert_claim_undone(project, feature, head)
    marks = fail_marks(feature)
    assert len(marks) == 1 and "post_iteration" in marks[0] and marks[0].endswith("(attempt 1/3)"), marks
    assert "verify: S-1 broke the build" in (feature / "logs" / "iteration-2.prompt.md").read_text()


# ---------------------------------------------------------------- quality gates


def test_a_failing_gate_refuses_the_claimed_story_and_says_why(project: Path, feature: Path, tmp_path: Path) -> None:
    head = git_out(project, "rev-parse", "HEAD").strip()
    gate, runs = flaky(tmp_path, "tests", GATE_MESSAGE)
    configure(project, quality_checks={"tests": gate})

    done = run(project, claim_then_look(), n=2)

    assert exit_code(done) == 1, done.screen
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    # The gate ran once, after the iteration that claimed S-1, in the project, with that iteration's values;
    # iteration 2 claimed nothing.
    assert lines(runs) == ["quality_check S-1 1"]
    assert_claim_undone(project, feature, head)
    assert GATE_MESSAGE in (feature / "logs" / "hooks" / "gate-tests-1.log").read_text()
    # The gate's output: in the iteration's log and in the next prompt; progress.txt gets a short line.
    log = (feature / "logs" / "iteration-1.log").read_text()
    assert "[ralph: quality gate tests: exit 1" in log and GATE_MESSAGE in log, log
    assert GATE_MESSAGE in (feature / "logs" / "iteration-2.prompt.md").read_text()
    note = entries(feature)[0]["Note"]
    assert "quality gate tests: exit 1" in note and "gate-tests-1.log" in note, note
    marks = fail_marks(feature)
    assert len(marks) == 1 and "quality checks fail: tests" in marks[0], marks
    assert GATE_MESSAGE not in (feature / "progress.txt").read_text()
    assert "quality gate tests: exit 1" in done.screen


@pytest.mark.parametrize("refuser", ["quality gate", "post_iteration exit 75"])
def test_a_story_refused_once_is_retried_and_completes(
    project: Path, feature: Path, tmp_path: Path, refuser: str
) -> None:
    write_prd(feature, 1)
    check, runs = flaky(tmp_path, "check", GATE_MESSAGE, code=1 if refuser == "quality gate" else 75)
    if refuser == "quality gate":
        configure(project, quality_checks={"tests": check})
    else:
        configure(project, hooks={"post_iteration": check})

    done = run(project, Turns(then=STORY), n=5)  # an internal error would raise here

    assert "internal error" not in done.screen, done.screen
    assert exit_code(done) == 0, done.screen
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["iteration"]) == ("complete", 2)
    assert passes(feature) == {"S-1": True}
    assert len(lines(runs)) == 2
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "complete"]
    assert git_out(project, "show", f"{REF.format(1)}:work-S-1.txt") == "done S-1\n"
    second_prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert GATE_MESSAGE in second_prompt and "## Current story: S-1" in second_prompt, second_prompt


def test_a_story_refused_by_a_gate_is_retried_before_the_next_one(project: Path, feature: Path, tmp_path: Path) -> None:
    write_prd(feature, 2)
    gate, runs = flaky(tmp_path, "tests", GATE_MESSAGE)
    configure(project, quality_checks={"tests": gate})

    done = run(project, Turns(then=STORY), n=5)

    assert exit_code(done) == 0, done.screen
    assert read_json(feature / "status.json")["exitReason"] == "complete"
    assert passes(feature) == {"S-1": True, "S-2": True}
    assert lines(runs) == ["quality_check S-1 1", "quality_check S-1 2", "quality_check S-2 3"]
    assert [entry["Story"].split(" - ")[0] for entry in entries(feature)] == ["S-1", "S-1", "S-2"]
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "complete", "complete"]
    subjects = git_out(project, "log", "--format=%s", "HEAD").splitlines()
    assert subjects.count("feat: S-1") == 1, subjects  # the refused attempt's commit is not on the branch


def test_every_gate_runs_and_only_the_failing_one_is_named(project: Path, feature: Path, tmp_path: Path) -> None:
    lint_ran = tmp_path / "lint.ran"
    configure(
        project,
        quality_checks={
            "tests": f"echo {shlex.quote(GATE_MESSAGE)}; exit 1",
            "lint": {"command": f"echo all clean; touch {shlex.quote(str(lint_ran))}", "timeout": "1m"},
        },
    )

    done = run(project, Turns(then=STORY), n=1)

    assert exit_code(done) == 1, done.screen
    assert lint_ran.exists()  # the gate after the failing one still ran
    hook_logs = feature / "logs" / "hooks"
    assert "all clean" in (hook_logs / "gate-lint-1.log").read_text()
    assert GATE_MESSAGE in (hook_logs / "gate-tests-1.log").read_text()
    marks = fail_marks(feature)
    assert len(marks) == 1 and "quality checks fail: tests -" in marks[0], marks
    assert "lint" not in marks[0]
    assert "quality gate lint" not in (feature / "logs" / "iteration-1.log").read_text()
    assert "quality gate lint" not in (feature / "progress.txt").read_text()
    assert "quality gate lint: passed" in done.screen
    assert "all clean" not in (feature / "logs" / "iteration-1.log").read_text()


@pytest.mark.parametrize("gate_passes", [True, False])
def test_when_every_story_already_passes_the_gates_decide(
    project: Path, feature: Path, tmp_path: Path, gate_passes: bool
) -> None:
    write_prd(feature, [{"id": "S-1", "title": "Done", "priority": 1, "passes": True}])
    events = tmp_path / "events.txt"
    gate_runs = tmp_path / "gate.runs"
    code = 0 if gate_passes else 1
    configure(
        project,
        hooks={event: recorder(events) for event in END_EVENTS},
        quality_checks={
            "typecheck": f"echo ran >> {shlex.quote(str(gate_runs))}; echo 'type error in api.py'; exit {code}"
        },
    )

    agent = Turns(then=STORY)
    done = run(project, agent)

    assert agent.launches == []
    assert lines(gate_runs) == ["ran"]
    assert not (feature / "logs" / "iteration-1.log").exists()
    assert (feature / "logs" / "hooks" / "gate-typecheck-0.log").is_file()
    status = read_json(feature / "status.json")
    ended = recorded(events)
    assert len(ended) == 1
    if gate_passes:
        assert exit_code(done) == 0, done.screen
        assert status["exitReason"] == "complete"
        assert (ended[0]["RALPH_EVENT"], ended[0]["RALPH_EXIT_REASON"]) == ("on_complete", "complete")
    else:
        assert exit_code(done) == 1, done.screen
        assert status["exitReason"] == "error"
        assert "quality gates fail: typecheck" in status["exitMessage"]
        assert "typecheck" in done.screen
        assert "type error in api.py" in done.screen
        assert (ended[0]["RALPH_EVENT"], ended[0]["RALPH_EXIT_REASON"]) == ("on_error", "error")
    assert passes(feature) == {"S-1": True}


def claims_completion(words: str) -> Turns:
    """An agent that writes a note and claims the whole feature done, every iteration."""
    return Turns(then=Turn(write={"notes-{n}.md": "done, I think\n"}, say=words + "\n<promise>COMPLETE</promise>\n"))


def test_completion_trust_does_not_complete_while_a_gate_fails(project: Path, feature: Path, tmp_path: Path) -> None:
    set_config(project, "completion: verify", "completion: trust")
    gate, runs = flaky(tmp_path, "tests", GATE_MESSAGE)
    configure(project, quality_checks={"tests": gate})

    done = run(project, claims_completion("All done."), n=3)

    assert exit_code(done) == 0, done.screen
    status = read_json(feature / "status.json")
    assert (status["exitReason"], status["iteration"]) == ("complete", 2)
    assert "completion: trust" in status["exitMessage"]
    assert lines(runs) == ["quality_check S-1 1", "quality_check S-1 2"]
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "in-progress"]
    assert GATE_MESSAGE in (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert passes(feature) == {"S-1": False, "S-2": False, "S-3": False}  # trust: the stories stay open


def test_completion_trust_with_a_gate_that_always_fails_never_completes(project: Path, feature: Path) -> None:
    set_config(project, "completion: verify", "completion: trust")
    configure(project, quality_checks={"tests": f"echo {shlex.quote(GATE_MESSAGE)}; exit 1"})

    done = run(project, claims_completion(""), n=2)

    assert exit_code(done) == 1, done.screen
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    assert [entry["Status"] for entry in entries(feature)] == ["failed", "failed"]
