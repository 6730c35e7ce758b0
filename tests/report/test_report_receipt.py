"""The receipt of `ralph report`, pure: per task, its attempts and totals (which add up to the summary's); the
timeline with its waits; the runs; the terminal's words and the JSON's UTC times."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from ralphloop.records.metrics_text import clock, format_summary, money
from ralphloop.records.summary import summarize
from ralphloop.report.receipt import Wait, build, outcome_words, runs, stories, timeline, to_json, waits
from ralphloop.report.text import attempts_words, receipt_text, story_table, timeline_lines

AT = datetime(2026, 1, 16, 12, 0, 0, tzinfo=UTC)


def line(
    number: int,
    task: str,
    outcome: str,
    *,
    at: str,
    duration: float = 60.0,
    wall: float | None = 61.0,
    cost: float | None = 0.1,
    tokens: tuple[int, int, int, int] = (1000, 200, 300, 5000),
    counted: bool | None = True,
    title: str | None = None,
    run: str | None = "1@x",
) -> dict[str, Any]:
    kinds = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
    found: dict[str, Any] = {
        "iteration": number,
        "timestamp": at,
        "duration_seconds": duration,
        "usage": dict(zip(kinds, tokens, strict=True)),
        "success": outcome == "complete",
        "cost_usd": cost,
        "task_id": task,
        "outcome": outcome,
        "counted": counted,
        "task_title": title,
        "wall_seconds": wall,
        "run_id": run,
    }
    return {key: value for key, value in found.items() if value is not None or key == "cost_usd"}  # as if older


LINES = [
    line(1, "S-1", "complete", at="2026-01-16T12:01:01Z", title="Parse", cost=0.2),
    line(2, "S-2", "failed", at="2026-01-16T12:02:02Z", title="Retry", cost=0.05),
    line(3, "S-2", "failed", at="2026-01-16T12:03:03Z", title="Retry uploads", cost=0.07),
    line(4, "S-2", "usage-limit", at="2026-01-16T12:03:13Z", duration=2.0, wall=2.5, counted=False, cost=None),
    line(5, "S-2", "complete", at="2026-01-16T17:10:00Z", run="2@y", cost=0.3),
]
# the usage limit's wait: announced until 17:05, over when iteration 5 began (its line comes later)
EVENTS = [
    {"time": "2026-01-16T12:00:00Z", "level": "info", "text": "run started"},
    {
        "time": "2026-01-16T12:03:14Z",
        "level": "warn",
        "text": "waiting",
        "wait": {"kind": "usage limit", "until": "2026-01-16T17:05:00Z"},
    },
    {"time": "2026-01-16T17:09:00Z", "level": "info", "text": "iteration 5 started"},
]


def test_a_row_per_task_with_its_attempts_in_order_and_its_own_totals() -> None:
    rows = stories(LINES)

    assert [row.task_id for row in rows] == ["S-1", "S-2"]
    first, second = rows
    assert (first.title, first.done) == ("Parse", True)
    assert second.title == "Retry uploads"  # the latest title the lines recorded
    assert [(a.iteration, a.outcome, a.counted) for a in second.attempts] == [
        (2, "failed", True),
        (3, "failed", True),
        (4, "usage-limit", False),
        (5, "complete", True),
    ]
    assert second.totals == summarize(LINES[1:])
    assert attempts_words(second, "passes") == "✗ failed ×2, ⚠ usage limit, ✓ passes"
    assert attempts_words(second, "done").endswith("✓ done")


def test_the_total_row_is_the_summarys_own_numbers() -> None:
    receipt = build(LINES, EVENTS)
    table = story_table(receipt, "passes", "Stories")
    summary = format_summary(receipt.summary)

    total = table[-2].split()  # the last row, then the note on the cost no call reported
    s = receipt.summary
    assert total[0] == "Total"
    assert " ".join(total[1:5]) == "5 (1 not counted)"
    assert total[5:] == [
        clock(s.duration_total_s).split()[0],
        clock(s.duration_total_s).split()[1],
        f"{s.total_tokens:,}",
        f"{s.cache_read_tokens:,}",
        money(s.cost_usd) + "*",
    ]
    assert f"  Total:           {clock(s.duration_total_s)}" in summary
    assert f"  Total:           {money(s.cost_usd)}" in summary
    assert table[-1] == "  * some calls reported no cost: the spend is more than shown"
    assert table[0].startswith("Stories (the receipt")
    assert table[1].split()[:3] == ["Story", "Title", "Attempts"]


def test_an_iteration_began_its_wall_time_before_its_line_and_a_wait_sits_where_it_happened() -> None:
    steps = timeline(LINES, waits(EVENTS))

    assert [(step.kind, step.iteration) for step in steps] == [
        ("iteration", 1),
        ("iteration", 2),
        ("iteration", 3),
        ("iteration", 4),
        ("wait", 0),
        ("iteration", 5),
    ]
    first = steps[0]
    assert first.end == datetime(2026, 1, 16, 12, 1, 1, tzinfo=UTC)
    assert first.start == datetime(2026, 1, 16, 12, 0, 0, tzinfo=UTC)  # 61 s of wall time before it ended
    assert first.seconds == 60.0  # agent time
    wait = steps[4]
    assert (wait.wait_kind, wait.start, wait.end) == (
        "usage limit",
        datetime(2026, 1, 16, 12, 3, 14, tzinfo=UTC),
        datetime(2026, 1, 16, 17, 5, 0, tzinfo=UTC),  # its `until`: the next line came later
    )
    assert wait.seconds == 5 * 3600 + 106
    assert steps[3].counted is False and steps[3].cost_usd is None


def test_quick_iterations_in_the_second_a_wait_began_come_before_it() -> None:
    """Times are whole seconds: three quick iterations (0.0 s of wall time) and the wait after the last all fall
    in 12:00:05; the wait still sits after them, and before the iteration that ended after it began."""
    quick = [
        line(n, "S-1", outcome, at="2026-01-16T12:00:05Z", duration=0.0, wall=0.0)
        for n, outcome in ((1, "failed"), (2, "failed"), (3, "usage-limit"))
    ]
    after = line(4, "S-1", "complete", at="2026-01-16T12:00:06Z", duration=0.0, wall=0.0)
    wait = Wait("usage limit", datetime(2026, 1, 16, 12, 0, 5, tzinfo=UTC), datetime(2026, 1, 16, 12, 0, 6, tzinfo=UTC))

    steps = timeline([*quick, after], [wait])

    assert [(step.kind, step.iteration) for step in steps] == [
        ("iteration", 1),
        ("iteration", 2),
        ("iteration", 3),
        ("wait", 0),
        ("iteration", 4),
    ]


def test_a_wait_cut_short_ends_at_the_next_line_and_bad_lines_are_skipped() -> None:
    found = waits(
        [
            {"time": "2026-01-16T12:00:00Z", "wait": {"kind": "rate limit", "until": "2026-01-16T13:00:00Z"}},
            {"time": "not a time", "text": "skipped"},
            {"wait": {"kind": "no time of its own", "until": "2026-01-16T13:00:00Z"}},
            {"time": "2026-01-16T12:10:00Z", "text": "run ended (interrupted)"},
            {"time": "2026-01-16T12:20:00Z", "wait": "not an object"},
            {"time": "2026-01-16T12:30:00Z", "wait": {"kind": "backoff", "until": 5}},
            {"time": "2026-01-16T12:40:00Z", "wait": {"kind": "\x1b[2Jcooldown", "until": "2026-01-16T12:45:00"}},
        ]
    )

    assert found == [
        Wait("rate limit", datetime(2026, 1, 16, 12, 0, tzinfo=UTC), datetime(2026, 1, 16, 12, 10, tzinfo=UTC)),
        # the last one: nothing after it, so it lasts to its end (a time without a zone is UTC, as ralph writes)
        Wait("cooldown", datetime(2026, 1, 16, 12, 40, tzinfo=UTC), datetime(2026, 1, 16, 12, 45, tzinfo=UTC)),
    ]


def test_lines_from_before_these_fields_still_have_a_place() -> None:
    old = [
        {"iteration": 1, "timestamp": "2026-01-16T12:01:00Z", "duration_seconds": 30.0, "success": True},
        {"iteration": 2, "duration_seconds": 30.0, "success": False, "outcome": "usage-limit"},
    ]
    steps = timeline(old)
    assert steps[0].start == datetime(2026, 1, 16, 12, 0, 30, tzinfo=UTC)  # its agent time before it ended
    assert (steps[1].start, steps[1].counted) == (None, False)
    [row] = stories(old)
    assert (row.task_id, row.title, [a.outcome for a in row.attempts]) == ("", "", ["unknown", "usage-limit"])
    [run] = runs(old)
    assert run.run_id == ""
    text = receipt_text(build(old), "passes", "Stories", "ralph report --json")
    assert "(no task)" in text and "--:--:--" in text and "? unknown" in text


def test_runs_are_the_files_runs_in_order_with_their_spend() -> None:
    found = runs(LINES)
    assert [(run.run_id, run.totals.iterations, run.totals.uncounted) for run in found] == [
        ("1@x", 3, 1),
        ("2@y", 1, 0),
    ]
    assert found[0].totals.cost_usd == pytest.approx(0.32)
    assert found[1].started == datetime(2026, 1, 16, 17, 8, 59, tzinfo=UTC)


def test_json_has_the_stories_timeline_and_runs_in_utc() -> None:
    body = to_json(build(LINES, EVENTS))

    assert list(body) == ["stories", "timeline", "runs", "windows"]
    second = body["stories"][1]
    assert second["id"] == "S-2" and second["done"] is True
    assert [attempt["outcome"] for attempt in second["attempts"]] == ["failed", "failed", "usage-limit", "complete"]
    assert second["calls_without_cost"] == 1
    assert second["tokens"] == {
        "input": 4000,
        "output": 800,
        "total": 4800,
        "cache_creation": 1200,
        "cache_read": 20000,
    }
    assert second["cost_usd"] == 0.42
    assert body["timeline"][0] == {
        "kind": "iteration",
        "start": "2026-01-16T12:00:00Z",
        "end": "2026-01-16T12:01:01Z",
        "agent_seconds": 60.0,
        "iteration": 1,
        "task_id": "S-1",
        "outcome": "complete",
        "counted": True,
        "tokens": 1200,
        "cache_read_tokens": 5000,
        "cost_usd": 0.2,
        "run_id": "1@x",
    }
    assert body["timeline"][4] == {
        "kind": "wait",
        "start": "2026-01-16T12:03:14Z",
        "end": "2026-01-16T17:05:00Z",
        "seconds": 18106.0,
        "wait": "usage limit",
    }
    assert [run["run_id"] for run in body["runs"]] == ["1@x", "2@y"]


@pytest.fixture
def kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process in UTC+05:30 (the screen's local time), put back afterwards."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_timeline_is_in_local_time_with_a_line_per_day(kolkata: None) -> None:
    lines = timeline_lines(build(LINES, EVENTS), "passes")

    assert lines[0] == "Timeline (local time, UTC+05:30; agent time per iteration):"
    assert lines[1] == "  Fri 16 Jan 2026"
    assert lines[2] == "  17:30:00  #1    S-1  ✓ passes          1m 0s  $0.2000"
    assert lines[5] == "  17:33:10  #4    S-2  ⚠ usage limit     0m 2s"  # no cost reported: none shown
    assert lines[6] == "  17:33:14  waited 5h 1m 46s (usage limit)"
    assert lines[7] == "  22:38:59  #5    S-2  ✓ passes          1m 0s  $0.3000"


def test_agent_text_is_cleaned_once_for_every_view() -> None:
    hostile = [line(1, "S-\x1b]0;pwned\x07 1", "complete", at="2026-01-16T12:01:01Z", title="a\x1b[31m red\r\n title")]
    receipt = build(hostile)
    assert receipt.stories[0].task_id == "S- 1"
    assert receipt.stories[0].title == "a red title"
    assert "\x1b" not in receipt_text(receipt, "passes", "Stories", "ralph report --json")
    assert outcome_words("something new") == "? something new"


def test_columns_no_agent_filled_are_left_out_as_the_summary_leaves_them_out() -> None:
    plain = [
        {
            "iteration": 1,
            "timestamp": "2026-01-16T12:01:00Z",
            "duration_seconds": 5.0,
            "success": True,
            "task_id": "T-1",
            "task_title": "Write the docs",
            "outcome": "complete",
            "counted": True,
        },
    ]
    table = story_table(build(plain), "done", "Tasks")

    assert table[1] == "  Task   Title           Attempts  Agent time"
    assert table[2] == "  T-1    Write the docs  ✓ done         0m 5s"
    assert table[-1] == "  Tokens and cost: not reported by the agent"


def test_a_wait_still_going_on_ends_now() -> None:
    going = [{"time": "2026-01-16T12:00:00Z", "wait": {"kind": "usage limit", "until": "2026-01-16T17:00:00Z"}}]
    now = datetime(2026, 1, 16, 12, 30, tzinfo=UTC)
    assert waits(going, now) == [Wait("usage limit", datetime(2026, 1, 16, 12, tzinfo=UTC), now)]
    assert waits(going, datetime(2026, 1, 16, 18, tzinfo=UTC))[0].end == datetime(2026, 1, 16, 17, tzinfo=UTC)


def test_a_screen_shows_the_last_entries_and_names_the_command_that_shows_them_all() -> None:
    lines = timeline_lines(build(LINES, EVENTS), "passes", last=2, everything="ralph report -f feat --json")

    assert lines[1] == "  (the last 2 of 6 entries; ralph report -f feat --json has them all)"
    assert [line.split()[1] for line in lines[3:]] == ["waited", "#5"]


def test_a_parallel_runs_loops_interleave_and_each_loop_is_one_run() -> None:
    interleaved = [
        line(1, "S-1", "complete", at="2026-01-16T12:00:05Z", run="loop-1"),
        line(1, "S-2", "failed", at="2026-01-16T12:00:06Z", run="loop-2"),
        line(2, "S-2", "complete", at="2026-01-16T12:00:09Z", run="loop-2"),
        line(2, "S-1", "complete", at="2026-01-16T12:00:10Z", run="loop-1"),
    ]
    older = [line(n, "S-1", "complete", at="2026-01-16T11:00:00Z", run=None) for n in (1, 2)]

    found = runs([*older, *interleaved])

    assert [(run.run_id, run.totals.iterations) for run in found] == [("", 2), ("loop-1", 2), ("loop-2", 2)]
