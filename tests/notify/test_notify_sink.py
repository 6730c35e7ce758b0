"""The notifier fed the engine's events as values: every notification event goes out, on its own thread, through
apprise (`ntfy://` to a loopback ntfy-style receiver) and through the plain webhook, with the payloads it should
have. A failing or hanging channel is a warning, never an exception, and the end of a run waits a bounded time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from ralphloop.core.events import AgentStarted, Archived, CircuitChanged, Waiting
from ralphloop.core.exitcodes import ExitReason
from ralphloop.notify.events import Seen
from ralphloop.notify.settings import EVENTS, NotifySettings
from ralphloop.notify.sink import Notifier
from tests.events import WHEN, iteration_finished, loop_ended, run_started
from tests.receiver import NO_PROXY, Receiver, receiving

LOCAL = timezone(timedelta(hours=1))  # the reset time in the user's zone, beside the ISO time in UTC
RESET = datetime(2026, 11, 21, 7, 30, tzinfo=UTC)  # 08:30 local, the same day as WHEN (03:00 local)
TOPIC = "ralph-auth-3f9c"


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    for name, value in NO_PROXY.items():
        monkeypatch.setenv(name, value)
    with receiving() as server:
        yield server


def _notifier(receiver: Receiver, warnings: list[str], **settings: Any) -> Notifier:
    chosen = {"desktop": False, "webhook": receiver.url, "urls": (receiver.ntfy(TOPIC),), "on": EVENTS, **settings}
    return Notifier(
        NotifySettings(**chosen), Seen("auth", "/p/.ralph/auth", "prd"), warnings.append, env={}, local=LOCAL
    )


def _run(notifier: Notifier, *events: object) -> None:
    for event in events:
        notifier(event)
    notifier.close(wait_s=60)  # a bound, not a speed: apprise loads in the thread


DURING = (
    run_started(feature="auth", done=2, total=6),
    AgentStarted(number=4, pid=123),  # apprise is loaded now, while the loop waits on its agent
    iteration_finished(number=4, status="complete", task_id="NOTE-2", task_title="Notes", done=3, total=6),
    iteration_finished(
        number=5,
        status="usage-limit",
        counted=False,
        task_id="NOTE-3",
        done=3,
        total=6,
        usage_limit={
            "message": "You've hit your 5-hour limit",
            "vendor": "claude",
            "kind": "five_hour",
            "resetsAt": "2026-11-21T07:30:00Z",
            "policy": "ask",
        },
    ),
    Waiting("answer", "Usage limit: wait for the reset?", WHEN + timedelta(seconds=30), 30.0, first=True),
    Waiting("answer", "Usage limit: wait for the reset?", WHEN + timedelta(seconds=30), 29.0),  # a tick: nothing
    CircuitChanged("CLOSED", "HALF_OPEN", "no progress in 2 iterations"),
    CircuitChanged(
        "HALF_OPEN", "OPEN", "no progress in 3 iterations", guidance="reset with: ralph run --reset-circuit"
    ),
)


def test_every_event_during_a_run_reaches_ntfy_and_the_webhook(receiver: Receiver) -> None:
    warnings: list[str] = []
    blocked = loop_ended(
        ExitReason.BLOCKED, message="blocked 3 times in a row", done=3, total=6, last_message="I need the DB password"
    )

    _run(_notifier(receiver, warnings), *DURING, blocked)

    assert warnings == []
    expected = [
        ("story_done", "ralph · auth: done", "NOTE-2 passes · 3/6 stories"),
        (
            "usage_limit",
            "ralph · auth: usage limit",
            "claude usage limit, resets 08:30 (2026-11-21T07:30:00Z) — asking whether to wait",
        ),
        (
            "needs_input",
            "ralph · auth: needs your input",
            "waiting for your answer until 03:00: Usage limit: wait for the reset?",
        ),
        (
            "circuit_half_open",
            "ralph · auth: circuit half-open",
            "circuit breaker half-open: no progress in 2 iterations",
        ),
        ("circuit_open", "ralph · auth: circuit open", "circuit breaker open: no progress in 3 iterations"),
        (
            "needs_input",
            "ralph · auth: needs your input",
            "stopped (blocked): blocked 3 times in a row — the agent's last words: I need the DB password",
        ),
    ]
    published = receiver.published()
    assert [(item["topic"], item["title"], item["message"]) for item in published] == [
        (TOPIC, title, body) for _, title, body in expected
    ]
    hooks = receiver.webhook()
    assert [(body["event"], body["title"], body["message"]) for body in hooks[:5]] == expected[:5]
    assert hooks[5]["message"] == "blocked 3 times in a row"  # a run's end keeps ralph 0.x's fields
    story, limit, question, half, opened, ended = hooks
    assert (story["taskId"], story["taskTitle"], story["iteration"]) == ("NOTE-2", "Notes", 4)
    assert (story["storiesComplete"], story["storiesTotal"], story["feature"]) == (3, 6, "auth")
    assert story["text"] == "ralph: auth: NOTE-2 passes · 3/6 stories"
    assert (limit["resetsAt"], limit["resetsAtLocal"]) == ("2026-11-21T07:30:00Z", "2026-11-21T08:30:00+01:00")
    assert (limit["vendor"], limit["limitKind"], limit["policy"]) == ("claude", "five_hour", "ask")
    assert limit["limitMessage"] == "You've hit your 5-hour limit"
    assert (question["deadline"], question["question"]) == ("2026-11-21T02:00:30Z", "Usage limit: wait for the reset?")
    assert (half["fromState"], half["toState"], opened["toState"]) == ("CLOSED", "HALF_OPEN", "OPEN")
    assert opened["guidance"] == "reset with: ralph run --reset-circuit"
    assert (ended["event"], ended["reason"], ended["exitCode"]) == ("needs_input", "blocked", 1)
    assert ended["lastMessage"] == "I need the DB password"
    assert {body["featureDir"] for body in hooks} == {"/p/.ralph/auth"}


@pytest.mark.parametrize(
    ("reason", "event", "body"),
    [
        (ExitReason.COMPLETE, "complete", "complete — 6/6 stories in 3 iterations"),
        (ExitReason.MAX_ITERATIONS, "halted", "stopped (max_iterations): reached the limit"),
        (ExitReason.INTERRUPTED, "interrupted", "interrupted after 3 iterations — 6/6 stories"),
    ],
)
def test_each_ending_goes_out_once_the_folder_is_where_it_stays(
    receiver: Receiver, reason: ExitReason, event: str, body: str
) -> None:
    warnings: list[str] = []
    notifier = _notifier(receiver, warnings)
    ending = loop_ended(reason, message="reached the limit", done=6, total=6)

    notifier(ending)
    assert receiver.requests == []  # held: the end hooks may still move the feature
    _run(notifier, Archived("/p/.ralph/archive/2026-11-21-auth"))

    assert warnings == []
    [published] = receiver.published()
    assert (published["title"], published["message"]) == (f"ralph · auth: {event}", body)
    [hook] = receiver.webhook()
    assert (hook["event"], hook["reason"], hook["featureDir"]) == (
        event,
        reason.value,
        "/p/.ralph/archive/2026-11-21-auth",
    )
    assert hook["text"] == f"ralph: auth {body}"


def test_only_the_chosen_events_go_out(receiver: Receiver) -> None:
    warnings: list[str] = []

    _run(_notifier(receiver, warnings, on=("circuit_open", "halted")), *DURING, loop_ended(ExitReason.BLOCKED))

    # a blocked stop is a halt too, for whoever did not choose needs_input
    assert [body["event"] for body in receiver.webhook()] == ["circuit_open", "halted"]
    assert len(receiver.published()) == 2


def test_a_failing_channel_is_one_warning_per_problem_and_never_an_exception(receiver: Receiver) -> None:
    receiver.status = 500
    warnings: list[str] = []
    stories = [iteration_finished(number=n, status="complete", task_id=f"S-{n}", done=n, total=3) for n in (1, 2, 3)]

    _run(_notifier(receiver, warnings, on=("story_done",)), *stories)

    assert len(receiver.webhook()) == 3 and len(receiver.published()) == 3  # each was tried
    port = receiver.port
    webhook, ntfy = warnings  # each told once, not once per notification
    assert webhook == f"notification: webhook http://127.0.0.1:{port} failed: HTTP 500 Internal Server Error"
    assert ntfy.startswith(f"notification: ntfy://127.0.0.1:{port} failed: ") and "500" in ntfy
    assert TOPIC not in ntfy  # apprise names the topic: a secret on ntfy.sh


def test_a_channel_that_hangs_holds_up_nothing_and_the_end_waits_a_bounded_time(receiver: Receiver) -> None:
    receiver.hold = threading.Event()
    warnings: list[str] = []
    notifier = _notifier(receiver, warnings, urls=(), on=("story_done",))
    finished = [iteration_finished(number=n, status="complete", task_id=f"S-{n}", done=n, total=40) for n in range(40)]

    notifier(finished[0])
    assert _until(lambda: len(receiver.requests) == 1)  # the thread is in the POST, which gets no answer
    for event in finished[1:]:
        notifier(event)  # returns at once: 32 wait in the queue, 7 find it full
    notifier.close(wait_s=0.2)
    receiver.hold.set()

    assert warnings == [
        "notification: 33 not sent within 0.2s of the run's end (given up)",
        "notification: 7 dropped: too many were waiting (a channel is not answering)",
    ]


def _until(condition: Callable[[], bool]) -> bool:
    """Whether `condition` came true within 30 s (a wait for another thread, not a measure of its speed)."""
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_webhooks_reason_phrase_reaches_no_screen_with_its_escapes() -> None:
    """The server's words are not ralph's: an HTTP reason phrase with a title change and a screen clear is cleaned
    before it is quoted in a warning (and the warning is cleaned again when it is printed)."""
    import http.server
    import threading

    from ralphloop.notify.deliver import post_json

    class Hostile(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(500, "Oops \x1b]0;PWNED\x07\x1b[2J")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        said = post_json(f"http://127.0.0.1:{server.server_address[1]}/hook", {"event": "complete"}, 5.0)
    finally:
        server.shutdown()
        server.server_close()
    assert said is not None and said.startswith("HTTP 500 Oops"), said
    assert "\x1b" not in said and "\x07" not in said
