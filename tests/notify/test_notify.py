"""What notifies and what it says (notify/events.py, pure): which events of a run become which notification,
their title and line, the webhook's payload; and the desktop notifier's argv (notify/deliver.py)."""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.core.events import CircuitChanged, LoopEnded, Tally, Waiting
from ralphloop.core.exitcodes import ExitReason
from ralphloop.notify.deliver import Channels, applescript_string, desktop_argv, find_notifier
from ralphloop.notify.events import Note, Seen, ending_kind, ending_note, note_for, payload
from ralphloop.notify.settings import DEFAULT_EVENTS, EVENTS, NotifySettings
from tests.events import WHEN, iteration_finished, loop_ended, run_started

SEEN = Seen("auth", "/p/.ralph/auth", "prd")
LOCAL = timezone(timedelta(hours=-5))


def ended(
    reason: ExitReason = ExitReason.COMPLETE,
    text: str = "every story passes",
    iterations: int = 12,
    done: int = 5,
    total: int = 5,
    **fields: object,
) -> LoopEnded:
    return loop_ended(
        reason, message=text, tally=Tally(counted=iterations), duration_s=83.4567, done=done, total=total, **fields
    )


def notes(*events: object, on: tuple[str, ...] = EVENTS, seen: Seen = SEEN) -> list[Note]:
    """The notes a run of `events` makes, the sink's way: each event with what the ones before it left."""
    found = []
    for event in events:
        note, seen = note_for(event, seen, on, {}, LOCAL)
        if note is not None:
            found.append(note)
    return found


# ---------------------------------------------------------------- which events notify


@pytest.mark.parametrize("reason", list(ExitReason), ids=lambda reason: reason.value)
def test_each_ending_has_one_kind(reason: ExitReason) -> None:
    expected = {
        ExitReason.COMPLETE: "complete",
        ExitReason.STORY_DONE: "complete",
        ExitReason.INTERRUPTED: "interrupted",
        ExitReason.BLOCKED: "needs_input",
        ExitReason.NEEDS_HUMAN: "needs_input",
    }.get(reason, "halted")
    assert ending_kind(reason) == expected
    note = ending_note(ended(reason), SEEN, EVENTS, {})
    assert note is not None and note.event == expected


@pytest.mark.parametrize("reason", list(ExitReason), ids=lambda reason: reason.value)
def test_the_default_events_leave_out_only_an_interrupt(reason: ExitReason) -> None:
    note = ending_note(ended(reason), SEEN, DEFAULT_EVENTS, {})
    assert (note is None) == (reason is ExitReason.INTERRUPTED)


def test_a_blocked_stop_is_a_halt_for_whoever_chose_halts_alone() -> None:
    blocked = ended(ExitReason.BLOCKED, "blocked 3 times in a row")
    assert ending_note(blocked, SEEN, ("halted",), {}).event == "halted"  # type: ignore[union-attr]
    assert ending_note(blocked, SEEN, ("complete",), {}) is None


def test_a_story_is_done_when_its_iteration_says_so_or_the_count_goes_up() -> None:
    found = notes(
        run_started(done=1, total=4),
        iteration_finished(number=1, status="complete", task_id="S-2", done=2, total=4),
        iteration_finished(number=2, status="in-progress", task_id="S-3", done=2, total=4),  # nothing new
        iteration_finished(number=3, status="in-progress", task_id="S-3", done=3, total=4),  # S-3 passes now
        iteration_finished(number=4, status="failed", task_id="S-4", done=3, total=4),
    )
    assert [(note.event, note.body) for note in found] == [
        ("story_done", "S-2 passes · 2/4 stories"),
        ("story_done", "S-3 passes · 3/4 stories"),
    ]


def test_a_plan_says_done_and_tasks() -> None:
    [note] = notes(iteration_finished(status="complete", task_id="T-2", done=2, total=5, source_kind="todo"))
    assert note.body == "T-2 done · 2/5 tasks"
    assert note.title == "ralph · auth: done"
    assert note.text == "ralph: auth: T-2 done · 2/5 tasks"


def _limited(number: int, resets: str | None, policy: str = "wait") -> object:
    limit = {"message": "limit reached", "vendor": "codex", "kind": "", "resetsAt": resets, "policy": policy}
    return iteration_finished(number=number, status="usage-limit", counted=False, usage_limit=limit, done=1, total=3)


def test_a_usage_limit_says_when_it_resets_in_local_time_and_in_utc_once() -> None:
    found = notes(
        _limited(1, "2026-11-21T20:15:00Z"),  # 15:15 in UTC-5, the day of WHEN (21:00 on the 20th there)
        _limited(2, "2026-11-21T20:15:00Z"),  # the same limit after the wait: not news
        _limited(3, "2026-11-22T01:00:00Z", "exit"),  # a new one
        _limited(4, None, "ask"),
    )
    assert [note.body for note in found] == [
        "codex usage limit, resets Sat 21 Nov 15:15 (2026-11-21T20:15:00Z) — waiting for the reset",
        "codex usage limit, resets Sat 21 Nov 20:00 (2026-11-22T01:00:00Z) — the run stops",
        "codex usage limit, reset unknown — asking whether to wait",
    ]
    assert found[0].fields["resetsAtLocal"] == "2026-11-21T15:15:00-05:00"
    assert found[2].fields["resetsAt"] is None


def test_a_question_notifies_when_it_is_asked_not_at_each_tick() -> None:
    until = WHEN + timedelta(minutes=1)
    found = notes(
        Waiting("answer", "wait for the reset?", until, 60.0, first=True),
        Waiting("answer", "wait for the reset?", until, 59.0),
        Waiting("answer", "", until, 0.0, done=True),
        Waiting("usage limit", "waiting", until, 60.0, first=True),  # a wait is not a question
    )
    assert [(note.event, note.body) for note in found] == [
        ("needs_input", "waiting for your answer until 21:01: wait for the reset?")
    ]
    assert found[0].fields == {
        "question": "wait for the reset?",
        "deadline": "2026-11-21T02:01:00Z",
        "deadlineLocal": "2026-11-20T21:01:00-05:00",
    }


def test_the_loops_own_question_says_waiting_for_your_answer_once() -> None:
    until = WHEN + timedelta(seconds=30)
    message = "usage limit (Claude AI usage limit reached): waiting for your answer"  # core/waiting.py's words
    [found] = notes(Waiting("answer", message, until, 30.0, first=True))
    assert found.body == "waiting for your answer until 21:00: usage limit (Claude AI usage limit reached)"


def test_a_hold_at_the_users_window_cap_notifies_as_a_usage_limit_once_per_reset() -> None:
    until = WHEN + timedelta(hours=2)
    said = "claude's 5-hour window is 55% used, at or past your cap of 50% (not the vendor's limit)"
    found = notes(
        Waiting("usage window", said, until, 7200.0, first=True),
        Waiting("usage window", said, until, 7199.0),
        Waiting("usage window", said, until, 7000.0, first=True),  # the same hold again: not news
    )
    assert [(note.event, note.body) for note in found] == [("usage_limit", f"{said} — waiting until 23:00")]
    assert found[0].fields["resetsAt"] == "2026-11-21T04:00:00Z" and found[0].fields["limitKind"] == "window"


def test_the_circuit_notifies_half_open_and_open_not_closed() -> None:
    found = notes(
        CircuitChanged("CLOSED", "HALF_OPEN", "no progress in 2 iterations"),
        CircuitChanged("HALF_OPEN", "CLOSED", "progress"),
        CircuitChanged("CLOSED", "OPEN", "same error 5 times", guidance="see ralph status"),
    )
    assert [(note.event, note.body) for note in found] == [
        ("circuit_half_open", "circuit breaker half-open: no progress in 2 iterations"),
        ("circuit_open", "circuit breaker open: same error 5 times"),
    ]


def test_only_the_chosen_events_notify() -> None:
    events = (
        iteration_finished(status="complete", done=1, total=3),
        CircuitChanged("CLOSED", "OPEN", "stuck"),
        _limited(2, None),
    )
    assert [note.event for note in notes(*events, on=("circuit_open",))] == ["circuit_open"]
    assert notes(*events, on=()) == []


# ---------------------------------------------------------------- the text


def test_ending_texts() -> None:
    def text(event: LoopEnded, kind: str = "prd") -> str:
        note = ending_note(event, Seen("auth", "/f", kind), EVENTS, {})
        assert note is not None
        return note.text

    assert text(ended()) == "ralph: auth complete — 5/5 stories in 12 iterations"
    assert text(ended(iterations=1, done=1, total=1)) == "ralph: auth complete — 1/1 stories in 1 iteration"
    assert text(ended(), "todo") == "ralph: auth complete — 5/5 tasks in 12 iterations"
    halt = ended(ExitReason.CIRCUIT_OPEN, "no progress in 3 iterations", done=2, last_message="I am stuck on X")
    assert text(halt) == (
        "ralph: auth stopped (circuit_open): no progress in 3 iterations — the agent's last words: I am stuck on X"
    )
    stopped = ended(ExitReason.INTERRUPTED, "interrupted", iterations=2, done=1)
    assert text(stopped) == "ralph: auth interrupted after 2 iterations — 1/5 stories"
    uncounted = loop_ended(ExitReason.INTERRUPTED, tally=Tally(counted=0, uncounted=1), done=0, total=3)
    assert text(uncounted) == "ralph: auth interrupted after 0 iterations (+1 not counted) — 0/3 stories"


def test_text_is_one_clean_line_with_secrets_masked() -> None:
    hostile = "line one\r\n\x1b[31mred\x1b[0m\x07 \x1b]0;title\x07tail\n\n\tend" + "x" * 1000
    note = ending_note(ended(ExitReason.ERROR, hostile), Seen("a\x1b[2Jb", "/f"), EVENTS, {})
    assert note is not None
    for text in (note.text, note.title, note.body):
        assert not re.search(r"[\x00-\x1f\x7f-\x9f]", text)
    assert note.text.startswith("ralph: ab stopped (error): line one red tail end")
    assert len(note.text) <= 300 and note.text.endswith("…")
    env = {"DEPLOY_TOKEN": "hunter2-very-secret"}
    leaky = ended(ExitReason.ERROR, "push failed with hunter2-very-secret and sk-ant-api03-abcdefghijk")
    masked = ending_note(leaky, Seen("f", "/f"), EVENTS, env)
    assert masked is not None
    assert masked.text == "ralph: f stopped (error): push failed with [REDACTED] and [REDACTED]"
    [story] = [
        note
        for note in [
            note_for(iteration_finished(status="complete", task_id="S-1 hunter2-very-secret"), SEEN, EVENTS, env)[0]
        ]
        if note
    ]
    assert "hunter2" not in json.dumps(payload(story, "/f"))


# ---------------------------------------------------------------- the webhook's payload


def test_the_end_of_a_run_keeps_the_fields_of_ralph_0x() -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)
    note = ending_note(ended(ExitReason.MAX_ITERATIONS, "reached the limit of 12 iterations", done=3), SEEN, EVENTS, {})
    assert note is not None
    body = payload(note, "/p/.ralph/auth", now=when, host="box")
    assert body == {
        "event": "halted",
        "title": "ralph · auth: halted",
        "feature": "auth",
        "featureDir": "/p/.ralph/auth",
        "reason": "max_iterations",
        "exitCode": 1,
        "message": "reached the limit of 12 iterations",
        "text": "ralph: auth stopped (max_iterations): reached the limit of 12 iterations",
        "iterations": 12,
        "storiesComplete": 3,
        "storiesTotal": 5,
        "durationSeconds": 83.457,
        "lastMessage": "",
        "time": "2026-03-04T05:06:07Z",
        "host": "box",
    }
    assert json.loads(json.dumps(body)) == body


@pytest.mark.parametrize("reason", list(ExitReason), ids=lambda reason: reason.value)
def test_payload_reason_and_exit_code(reason: ExitReason) -> None:
    note = ending_note(ended(reason, "why\x1b[1m\nnot"), SEEN, EVENTS, {"X_SECRET": "why-not-secret"})
    assert note is not None
    body = payload(note, "/f")
    assert body["event"] == ending_kind(reason)
    assert (body["reason"], body["exitCode"]) == (reason.value, reason.exit_code)
    assert body["message"] == "why not"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["time"])


def test_the_readme_shows_the_payload_of_every_event() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme[readme.index("#### Notifications") :]
    examples = [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", section, re.DOTALL)]
    note = ending_note(ended(), SEEN, EVENTS, {})
    assert note is not None
    assert set(examples[0]) == set(payload(note, "/f"))
    for event in EVENTS:
        assert f"`{event}`" in section


# ---------------------------------------------------------------- desktop notifiers


def _decode_applescript(literal: str) -> str:
    """An AppleScript string literal read back as AppleScript reads it (fails on an unescaped quote)."""
    assert literal.startswith('"') and literal.endswith('"') and len(literal) >= 2
    out, body, index = [], literal[1:-1], 0
    escapes = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
    while index < len(body):
        char = body[index]
        assert char != '"', f"unescaped quote in {literal!r}"
        if char == "\\":
            out.append(escapes[body[index + 1]])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def test_applescript_quoting() -> None:
    text = 'say "hi" \\ back\\slash\nnew line\t"'
    literal = applescript_string(text)
    assert literal == '"say \\"hi\\" \\\\ back\\\\slash\\nnew line\\t\\""'
    assert _decode_applescript(literal) == text
    assert "\n" not in literal


@given(st.text())
def test_applescript_quoting_round_trips(text: str) -> None:
    assert _decode_applescript(applescript_string(text)) == text


def test_desktop_argv_never_a_shell() -> None:
    text = 'ralph: f stopped (error): "quoted" $(rm -rf ~) `x` \\'
    assert desktop_argv("/usr/bin/notify-send", text) == ["/usr/bin/notify-send", "--app-name=ralph", "ralph", text]
    assert desktop_argv("/opt/bin/tt", text) == ["/opt/bin/tt", "notify", text]
    script = desktop_argv("/usr/bin/osascript", text)
    assert script[:2] == ["/usr/bin/osascript", "-e"] and len(script) == 3
    assert script[2] == f'display notification {applescript_string(text)} with title "ralph"'


def _executable(folder: Path, name: str, mode: int = 0o755) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    return path


def test_find_notifier_takes_the_first_in_order_from_the_given_path(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    tt = _executable(first, "tt")
    osascript = _executable(second, "osascript")
    path = os.pathsep.join([str(first), str(second)])
    assert find_notifier({"PATH": path}) == str(osascript)  # osascript comes before tt, wherever it is
    notify_send = _executable(second, "notify-send")
    assert find_notifier({"PATH": path}) == str(notify_send)
    assert find_notifier({"PATH": str(first)}) == str(tt)
    assert find_notifier({"PATH": str(tmp_path / "none")}) is None


def test_find_notifier_skips_files_that_cannot_run(tmp_path: Path) -> None:
    _executable(tmp_path, "notify-send", stat.S_IRUSR | stat.S_IWUSR)
    assert find_notifier({"PATH": str(tmp_path)}) is None


def test_nothing_found_is_silent_unless_desktop_was_asked_for(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    note = ending_note(ended(), SEEN, EVENTS, {})
    assert note is not None
    assert Channels(NotifySettings(), env).send(note, "/f") == []
    assert Channels(NotifySettings(desktop=True), env).send(note, "/f") == [
        "notification: no desktop notifier found (notify-send, osascript or tt on PATH)"
    ]


def test_a_broken_webhook_is_a_warning_that_does_not_repeat_it(tmp_path: Path) -> None:
    note = ending_note(ended(), SEEN, EVENTS, {})
    assert note is not None
    # a URL config would have refused: still only a warning
    warnings = Channels(NotifySettings(desktop=False, webhook="http://[broken/x"), {}).send(note, "/f")
    assert len(warnings) == 1 and warnings[0].startswith("notification: webhook ")
    assert "broken/x" not in warnings[0]
