"""Notifications when a run ends, in-process: runs built as `ralph run` builds them with the notifier subscribed as
the CLI subscribes it (harness.run(notify=True)), their agents played back. A loopback webhook records the POST, a
fake `notify-send` on PATH records its argv. A failed notification is one warning line on stderr; the run's end
and files do not change. The CLI's side (a bad URL's one error line, a dry run, an unreachable webhook in a real
`ralph run`) and the two effects against real peers are tests/integration/test_notify_e2e.py's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import FakeClock
from ralphloop.core.exitcodes import ExitReason
from tests.conftest import PYTHON, read_json
from tests.engine.harness import STORY, Turn, Turns, run
from tests.receiver import NO_PROXY, Receiver, receiving

PAYLOAD_KEYS = {
    "event",
    "title",
    "lastMessage",
    "feature",
    "featureDir",
    "reason",
    "exitCode",
    "message",
    "text",
    "iterations",
    "storiesComplete",
    "storiesTotal",
    "durationSeconds",
    "time",
    "host",
}
NOTHING = Turn(say="nothing\n")  # tests/agents/say.py nothing


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiving() as server:
        yield server


@pytest.fixture
def loopback(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy for a loopback request, whatever the environment names."""
    for name, value in NO_PROXY.items():
        monkeypatch.setenv(name, value)


def notify_config(project: Path, *lines: str) -> None:
    """Append a `notify:` section to the .ralph/config.yaml `ralph init` wrote."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nnotify:\n" + "".join(f"  {line}\n" for line in lines))


def fake_notify_send(tmp_path: Path, *, exit_code: int = 0, complaint: str = "") -> tuple[dict[str, str], Path]:
    """A `notify-send` first on PATH that appends its argv (one JSON line) to a file; (env, record)."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    record = tmp_path / "notify-send.jsonl"
    script = folder / "notify-send"
    script.write_text(
        f"#!{PYTHON}\n"
        "import json, sys\n"
        f"with open({str(record)!r}, 'a') as handle:\n"
        "    handle.write(json.dumps(sys.argv[1:]) + '\\n')\n"
        f"sys.stderr.write({complaint!r})\n"
        f"sys.exit({exit_code})\n"
    )
    script.chmod(0o755)
    return {"PATH": str(folder) + os.pathsep + os.environ.get("PATH", "")}, record


def argvs(record: Path) -> list[list[str]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def warnings_in(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "warning" in line]


def on_path(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def test_an_archived_feature_is_posted_where_it_was_moved_to(
    project: Path, feature: Path, hook: Receiver, loopback: None
) -> None:
    notify_config(project, "desktop: false", f"webhook: {hook.url}")

    done = run(project, Turns(then=STORY), archive=True, notify=True)

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    moved = next((project / ".ralph" / "archive").iterdir())
    assert not feature.exists()
    assert hook.bodies()[0]["featureDir"] == str(moved)
    assert f"(its metrics log with it: {moved.relative_to(project)}/ralph_metrics.jsonl)" in done.screen


def test_a_completed_run_posts_its_outcome(
    project: Path, feature: Path, hook: Receiver, loopback: None, capsys: pytest.CaptureFixture[str]
) -> None:
    notify_config(project, "desktop: false", f"webhook: {hook.url}")
    clock = FakeClock(start=datetime.now(UTC))
    working = dataclasses.replace(STORY, first=lambda launch: clock.advance(2.0))  # each story takes 2 s

    done = run(project, Turns(then=working), clock=clock, notify=True)

    assert done.outcome.reason.exit_code == 0, done.screen
    assert warnings_in(capsys.readouterr().err) == []
    assert len(hook.requests) == 1
    request = hook.requests[0]
    assert request["path"] == "/hook"
    assert request["headers"]["Content-Type"] == "application/json"
    body = hook.bodies()[0]
    assert set(body) == PAYLOAD_KEYS
    assert body["event"] == "complete"
    assert (body["reason"], body["exitCode"]) == ("complete", 0)
    assert (body["feature"], body["featureDir"]) == ("feat", str(feature))
    assert (body["iterations"], body["storiesComplete"], body["storiesTotal"]) == (3, 3, 3)
    assert body["text"] == "ralph: feat complete — 3/3 stories in 3 iterations"
    assert body["message"] == read_json(feature / "status.json")["exitMessage"]
    assert isinstance(body["durationSeconds"], float) and body["durationSeconds"] > 0
    assert body["durationSeconds"] == 6.0  # the run's own clock
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["time"])
    assert body["host"] == socket.gethostname()


def test_a_halted_run_posts_halt_to_the_url_from_the_environment(
    project: Path,
    feature: Path,
    hook: Receiver,
    loopback: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    notify_config(project, "desktop: false")
    monkeypatch.setenv("RALPH_NOTIFY_WEBHOOK", hook.url)

    done = run(project, Turns(then=NOTHING), n=1, notify=True)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert warnings_in(capsys.readouterr().err) == []
    [body] = hook.bodies()
    status = read_json(feature / "status.json")
    assert body["event"] == "halted"
    assert (body["reason"], body["exitCode"]) == ("max_iterations", 1)
    assert (body["iterations"], body["storiesComplete"], body["storiesTotal"]) == (1, 0, 3)
    assert body["message"] == status["exitMessage"]
    assert body["text"] == f"ralph: feat stopped (max_iterations): {status['exitMessage']}"


def test_the_desktop_notifier_gets_the_message(
    project: Path, feature: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env, record = fake_notify_send(tmp_path)
    on_path(monkeypatch, env)

    done = run(project, Turns(then=NOTHING), n=1, notify=True)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert warnings_in(capsys.readouterr().err) == []
    message = read_json(feature / "status.json")["exitMessage"]
    assert argvs(record) == [["--app-name=ralph", "ralph", f"ralph: feat stopped (max_iterations): {message}"]]


def test_desktop_false_turns_the_notifier_off(
    project: Path, feature: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, record = fake_notify_send(tmp_path)
    on_path(monkeypatch, env)
    notify_config(project, "desktop: false")

    done = run(project, Turns(then=NOTHING), n=1, notify=True)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert argvs(record) == []


def test_a_failing_desktop_notifier_is_one_warning(
    project: Path, feature: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env, record = fake_notify_send(tmp_path, exit_code=3, complaint="Cannot autolaunch D-Bus\x1b[31m without X11\n")
    on_path(monkeypatch, env)

    done = run(project, Turns(then=NOTHING), n=1, notify=True)

    assert done.outcome.reason.exit_code == 1, done.screen
    assert len(argvs(record)) == 1
    assert warnings_in(capsys.readouterr().err) == [
        "ralph: warning: notification: notify-send failed: exit code 3: Cannot autolaunch D-Bus without X11"
    ]


@pytest.mark.parametrize("opted_in", [False, True], ids=["default", "on-interrupt"])
def test_an_interrupt_is_notified_only_when_asked(
    project: Path,
    feature: Path,
    hook: Receiver,
    loopback: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    opted_in: bool,
) -> None:
    env, record = fake_notify_send(tmp_path)
    on_path(monkeypatch, env)
    # ralph 0.x's names, still read: halt is halted, interrupt is interrupted
    notify_config(project, f"webhook: {hook.url}", *(["on: [complete, halt, interrupt]"] if opted_in else []))
    cancel = CancelToken()  # what ralph's Ctrl+C handler sets (cli/interrupts.py): the agent is stopped as it starts
    interrupting = Turn(first=lambda launch: cancel.set(), say="interrupting ralph\n")

    done = run(project, Turns(then=interrupting), n=3, cancel=cancel, notify=True)

    assert done.outcome.reason is ExitReason.INTERRUPTED and done.outcome.reason.exit_code == 130, done.screen
    assert read_json(feature / "status.json")["exitReason"] == "interrupted"
    assert warnings_in(capsys.readouterr().err) == []
    if not opted_in:
        assert hook.requests == []
        assert argvs(record) == []
        return
    [body] = hook.bodies()
    assert (body["event"], body["reason"], body["exitCode"]) == ("interrupted", "interrupted", 130)
    assert argvs(record) == [
        ["--app-name=ralph", "ralph", "ralph: feat interrupted after 0 iterations (+1 not counted) — 0/3 stories"]
    ]
