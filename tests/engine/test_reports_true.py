"""Every report ralph makes is true (the engine issue's nine cases), in-process: runs built as `ralph run` builds
them, their agents played back (harness.py), their screens drawn by the real renderer, in real git repositories.
Rejected work is never committed nor counted a success, a failed last attempt leaves the task file as it was, a
one-story run says what it finished, the numbers agree on every surface, churn trips the breaker, and a stop that
needs the user shows what the agent last said. `ralph status` and `ralph report` read the records in this process
too; a reset circuit seen by `ralph status` and the monitor is tests/integration/test_reports_true.py's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.runner import Launch
from tests.conftest import read_json, write_prd
from tests.engine.harness import Turn, Turns, git_out, metrics, ralph, run
from tests.integration.test_analysis_blocked import BLOCKED

CLAUDE = Path(__file__).resolve().parents[1] / "fixtures" / "claude"
# What tests/agents/story_agent.py does: the story it is given finished, marked passing, committed.
FINISH = Turn(write={"work-{task}.txt": "done {task}\n"}, passes=["{task}"], commit="feat: {task}", say="finished\n")
SONNET = "claude-sonnet-4-5-20250929"
LIMITED = "Claude AI usage limit reached|1000000000\n"  # a reset long past: no wait


def prepared(project: Path, stories: int = 3, config: str = "") -> Path:
    """.ralph/feat (made by `ralph init`) with `stories` open stories and `config` as .ralph/config.yaml, committed."""
    assert ralph("init", "feat").code == 0
    folder = project / ".ralph" / "feat"
    write_prd(folder, stories)
    if config:
        (project / ".ralph" / "config.yaml").write_text(config)
    git_out(project, "add", "-A")
    git_out(project, "commit", "-q", "-m", "plan")
    return folder


def passing(folder: Path) -> list[str]:
    return [story["id"] for story in read_json(folder / "prd.json")["userStories"] if story["passes"]]


def claude_stream(model: str, cost: float) -> str:
    """A real Claude Code stream-json run (tests/fixtures/claude/gleam_basic_query.ndjson) answered by `model` at
    `cost`, as tests/agents/fake_claude.py prints it."""
    usage = next(iter(read_json(CLAUDE / "gleam_result_success.json")["modelUsage"].values()))
    lines = []
    for line in (CLAUDE / "gleam_basic_query.ndjson").read_text().splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        if event.get("type") == "system":
            event["model"] = model
        elif event.get("type") == "assistant":
            event["message"]["model"] = model
        elif event.get("type") == "result":
            event["modelUsage"] = {model: usage}
            event["total_cost_usd"] = cost
        lines.append(json.dumps(event) + "\n")
    return "".join(lines)


# ---------------------------------------------------------------- 1. rejected work: never committed, never a success


def test_work_of_the_wrong_model_is_undone_never_committed_and_never_counted_a_success(
    project: Path, home: Path
) -> None:
    config = (
        "agent: claude\nclaude:\n  command: /bin/true\nbackoff:\n  initial_seconds: 0\n  attempts: 1\n"
        "git:\n  auto_commit: true\n"
    )
    folder = prepared(project, config=config)
    head = git_out(project, "rev-parse", "HEAD")
    sonnet = Turn(  # tests/agents/fake_claude.py: the story finished, then what Claude Code printed
        write={"work-{task}.txt": "done {task}\n"}, passes=["{task}"], say=claude_stream(SONNET, 0.25)
    )

    done = run(project, Turns(then=sonnet), backend=None, n=3, flags={"model": ("opus", "--model")})

    assert done.outcome.reason is ExitReason.MODEL_MISMATCH
    assert "model_mismatch" in done.screen
    assert "committed" not in done.screen and "✓ S-1" not in done.screen
    assert git_out(project, "rev-parse", "HEAD") == head  # nothing committed, by ralph or anyone
    assert passing(folder) == []  # the wrong model's work was undone, its story mark with it
    assert not (project / "work-S-1.txt").exists()
    lines = metrics(folder)
    assert len(lines) == 2  # the first try and the one retry the backoff allows
    assert all(line["success"] is False and line["counted"] is False for line in lines)
    assert all(line["outcome"] == "failed" for line in lines)
    report = json.loads(ralph("report", "-f", "feat", "--json").out)["summary"]
    assert (report["iterations"], report["successes"], report["calls_not_counted"]) == (0, 0, 2)
    status = json.loads(ralph("status", "-f", "feat", "--json").out)
    assert (status["storiesComplete"], status["iterationsCounted"], status["callsNotCounted"]) == (0, 0, 2)
    assert "Summary: 0 iterations (+2 calls not counted) · 0 advanced" in done.screen


def test_a_refused_completion_claim_is_not_committed_nor_a_success(project: Path, home: Path) -> None:
    folder = prepared(project, config="git:\n  auto_commit: true\n")
    head = git_out(project, "rev-parse", "HEAD")
    claim = Turn(write={"a.txt": "a\n"}, passes=["S-1"], say="<promise>COMPLETE</promise>\n")

    done = run(project, Turns(claim), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert "completion claim refused" in done.screen
    assert git_out(project, "rev-parse", "HEAD") == head
    assert (project / "a.txt").exists()  # the work is kept, uncommitted: a refused claim is not a failed attempt
    [line] = metrics(folder)
    assert (line["outcome"], line["success"], line["counted"]) == ("refused", False, True)
    assert "Success Rate:    0%" in done.screen


# ---------------------------------------------------------------- 2. a failed last attempt: the task file as it was


def test_a_crash_after_setting_passes_on_the_last_allowed_iteration_is_undone(project: Path, home: Path) -> None:
    folder = prepared(project)
    before = (folder / "prd.json").read_bytes()

    done = run(project, Turns(Turn(write={"half.txt": "x\n"}, passes=["S-1"], exit=3)), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert "max_iterations" in done.screen
    assert (folder / "prd.json").read_bytes() == before  # S-1 is not left passing
    assert not (project / "half.txt").exists()
    assert git_out(project, "for-each-ref", "refs/ralph/attempts/")  # saved before it was undone
    status = json.loads(ralph("status", "-f", "feat", "--json").out)
    assert status["storiesComplete"] == 0
    [line] = metrics(folder)
    assert (line["outcome"], line["success"]) == ("failed", False)


def test_a_story_whose_last_attempt_fails_its_gate_is_not_left_passing(project: Path, home: Path) -> None:
    folder = prepared(project, config="max_retries: 2\nquality_checks:\n  tests: exit 1\n")

    done = run(project, Turns(then=Turn(write={"s1.txt": "{n}\n"}, passes=["S-1"])), n=5)

    assert done.outcome.reason is ExitReason.RETRIES_EXHAUSTED
    assert "retries_exhausted" in done.screen
    assert passing(folder) == []
    assert "Stories:    0 / 3 pass" in ralph("status", "-f", "feat").out
    assert [line["success"] for line in metrics(folder)] == [False, False]


# ---------------------------------------------------------------- 3. -s ID: that story done, not the feature


def test_a_one_story_run_says_that_story_is_done_and_neither_completes_nor_archives_the_feature(
    project: Path, home: Path
) -> None:
    folder = prepared(project)

    done = run(project, Turns(then=FINISH), story="S-2", archive=True)

    assert done.outcome.reason is ExitReason.STORY_DONE
    assert "✓ STORY S-2 done (story S-2 done; 2 other tasks still open)" in done.screen
    assert "ALL COMPLETE" not in done.screen
    assert passing(folder) == ["S-2"]
    status = json.loads(ralph("status", "-f", "feat", "--json").out)
    assert (status["status"], status["exitReason"]) == ("story_done", "story_done")
    assert not (project / ".ralph" / "archive").exists()


def test_resume_from_a_story_says_which_stories_it_finished(project: Path, home: Path) -> None:
    prepared(project)

    done = run(project, Turns(then=FINISH), resume_from="S-2", archive=True)

    assert done.outcome.reason is ExitReason.STORY_DONE
    assert "✓ STORIES from S-2 on done (stories from S-2 on done; 1 other task still open)" in done.screen
    assert "ALL COMPLETE" not in done.screen
    assert not (project / ".ralph" / "archive").exists()


def test_a_one_story_run_that_finishes_the_last_open_story_completes_the_feature(project: Path, home: Path) -> None:
    folder = prepared(project, stories=2)
    prd = read_json(folder / "prd.json")
    prd["userStories"][0]["passes"] = True
    (folder / "prd.json").write_text(json.dumps(prd, indent=2))
    git_out(project, "commit", "-qam", "S-1 done")

    done = run(project, Turns(then=FINISH), story="S-2", archive=True)

    assert done.outcome.reason is ExitReason.COMPLETE
    assert "ALL COMPLETE! 2/2" not in done.screen  # the run saw one story: it says so
    assert "ALL COMPLETE! 1/1" in done.screen
    assert (project / ".ralph" / "archive").is_dir()


# ---------------------------------------------------------------- 5. one set of numbers


def test_a_usage_limited_call_is_numbered_but_not_counted_on_every_surface(project: Path, home: Path) -> None:
    folder = prepared(project, stories=1, config="usage_limit:\n  policy: wait\n  margin_seconds: 0\n")

    done = run(project, Turns(Turn(say=LIMITED, exit=1), then=FINISH))

    assert done.outcome.reason is ExitReason.COMPLETE
    out = done.screen
    assert "── Iteration 1 / 20 · S-1" in out
    assert "── Iteration 2 · S-1: Story 1 · this run: 0/20 counted so far, 1 call not counted" in out
    assert "Summary: 1 iteration (+1 call not counted) · 1 advanced, 0 failed" in out
    assert "  Completed:       1 / 20\n  Not counted:     1 agent call" in out
    assert "Success Rate:    100%" in out
    assert [(line["iteration"], line["counted"]) for line in metrics(folder)] == [(1, False), (2, True)]
    progress = (folder / "progress.txt").read_text()
    assert "Iteration: 1\n" in progress and "Iteration: 2\n" in progress
    status = ralph("status", "-f", "feat").out
    assert "Iteration:  2 · counted 1 of 20 this run, 1 call not counted" in status
    report = ralph("report", "-f", "feat").out
    assert "  Completed:       1\n" in report and "Not counted:     1 agent call" in report


def test_iterations_that_open_the_breaker_are_not_a_success(project: Path, home: Path) -> None:
    folder = prepared(project)

    done = run(project, Turns(then=Turn(say="still thinking\n")))

    assert done.outcome.reason is ExitReason.CIRCUIT_OPEN
    assert "circuit_open" in done.screen
    assert "Success Rate:    0%" in done.screen
    assert all(line["success"] is False for line in metrics(folder))
    assert "Summary: 3 iterations · 0 advanced, 0 failed" in done.screen


# ---------------------------------------------------------------- 7. churn trips the breaker


def test_files_that_churn_while_no_task_advances_trip_the_breaker(project: Path, home: Path) -> None:
    folder = prepared(project)

    done = run(project, Turns(then=Turn(write={"churn.txt": "{rand}\n"}, commit="churn {n}")))

    assert done.outcome.reason is ExitReason.CIRCUIT_OPEN
    assert "no progress in 3 iterations in a row (files changed in 3 of them, but no task advanced)" in done.screen
    assert len(metrics(folder)) == 3


# ---------------------------------------------------------------- 9. the agent's last words when it needs the user


BLOCKED_REPLY = BLOCKED.replace(  # the agent explains first, then its last paragraph says what it needs
    "I cannot reach the database.", "I cannot reach the database.\n\nPlease start it with `docker compose up db`."
)


def test_a_blocked_stop_shows_what_the_agent_last_said(project: Path, home: Path) -> None:
    prepared(project)

    done = run(project, Turns(then=Turn(say=BLOCKED_REPLY)))

    assert done.outcome.reason is ExitReason.BLOCKED
    assert "Stopped (blocked)" in done.screen
    said = "Please start it with `docker compose up db`."
    assert f"The agent's last words: {said}" in done.screen
    assert f"Agent said: {said}" in ralph("status", "-f", "feat").out


def test_a_call_that_did_not_count_is_saved_and_undone_marks_and_all(project: Path, home: Path) -> None:
    folder = prepared(project, stories=2, config="usage_limit:\n  policy: wait\n  margin_seconds: 0\n")
    limited = Turn(write={"half.txt": "half\n"}, passes=["S-1"], err=LIMITED, exit=1)
    then = Turn(write={"s.txt": "{n}\n"}, passes=["S-1", "S-2"])

    done = run(project, Turns(limited, then=then))

    assert done.outcome.reason is ExitReason.COMPLETE
    first, second = (folder / "progress.txt").read_text().split("\n---\n")[1:3]
    assert "Status: usage-limit" in first
    assert "usage-limited attempt saved as refs/ralph/attempts/feat/iteration-1" in first
    assert not (project / "half.txt").exists()  # undone, after it was saved:
    assert git_out(project, "show", "refs/ralph/attempts/feat/iteration-1:half.txt") == "half\n"
    # the next iteration found S-1 open again, and it is the iteration that finished it
    assert "Story: S-1 - Story 1" in second and "Status: complete" in second
    assert [line["counted"] for line in metrics(folder)] == [False, True]


def add_a_story(launch: Launch) -> None:
    """What an agent that only plans does: one more open story in prd.json."""
    path = Path(launch.command.env["RALPH_FEATURE_DIR"]) / "prd.json"
    prd: dict[str, Any] = read_json(path)
    n = len(prd["userStories"]) + 1
    prd["userStories"].append(
        {"id": f"S-{n}", "title": f"Story {n}", "acceptanceCriteria": ["c"], "priority": n, "passes": False}
    )
    path.write_text(json.dumps(prd, indent=2))


def test_an_agent_that_only_adds_stories_is_not_making_progress(project: Path, home: Path) -> None:
    folder = prepared(project)

    done = run(project, Turns(then=Turn(first=add_a_story, say="planned one more story\n")))

    assert done.outcome.reason is ExitReason.CIRCUIT_OPEN
    assert "no progress in 3 iterations in a row" in done.screen
    assert len(read_json(folder / "prd.json")["userStories"]) == 6


def test_a_run_that_stops_before_any_call_still_shows_the_calls_of_the_hour(project: Path, home: Path) -> None:
    folder = prepared(project)
    assert run(project, Turns(then=Turn())).outcome.reason is ExitReason.CIRCUIT_OPEN  # the circuit opens

    again = run(project, Turns(then=Turn()))

    assert again.outcome.reason is ExitReason.CIRCUIT_OPEN and "circuit_open" in again.screen
    assert read_json(folder / "status.json")["apiCallsUsed"] == 3
    assert "Calls:      3/100 in the last hour" in ralph("status", "-f", "feat").out
