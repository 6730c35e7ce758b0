"""notify.py's pure parts: which endings are notified, the text, the AppleScript quoting, the payload, the URL
checks; and config's `notify` section."""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.config import load_settings
from ralphloop.config_template import DEFAULT_PROJECT_CONFIG
from ralphloop.errors import RalphError
from ralphloop.events import LoopEnded, Tally
from ralphloop.exitcodes import ExitReason
from ralphloop.notify import (
    NotifySettings,
    applescript_string,
    check_webhook_url,
    desktop_argv,
    event_kind,
    find_notifier,
    message,
    notified,
    notify_end,
    origin,
    payload,
)
from tests.events import loop_ended


def ended(
    reason: ExitReason = ExitReason.COMPLETE,
    text: str = "every story passes",
    iterations: int = 12,
    done: int = 5,
    total: int = 5,
) -> LoopEnded:
    return loop_ended(reason, message=text, tally=Tally(counted=iterations), duration_s=83.4567, done=done, total=total)


# ---------------------------------------------------------------- which endings are notified


@pytest.mark.parametrize("reason", list(ExitReason), ids=lambda reason: reason.value)
def test_decision_table_by_default(reason: ExitReason) -> None:
    expected = {ExitReason.COMPLETE: "complete", ExitReason.STORY_DONE: "complete", ExitReason.INTERRUPTED: None}.get(
        reason, "halt"
    )
    assert notified(NotifySettings(), reason) == expected


@pytest.mark.parametrize("reason", list(ExitReason), ids=lambda reason: reason.value)
def test_only_the_listed_events_are_notified(reason: ExitReason) -> None:
    assert notified(NotifySettings(on=("interrupt",)), reason) == (
        "interrupt" if reason is ExitReason.INTERRUPTED else None
    )
    assert notified(NotifySettings(on=()), reason) is None
    assert notified(NotifySettings(on=("complete", "halt", "interrupt")), reason) == event_kind(reason)


# ---------------------------------------------------------------- the text


def test_complete_message() -> None:
    assert message(ended(), "auth", env={}) == "ralph: auth complete — 5/5 stories in 12 iterations"
    assert (
        message(ended(iterations=1, done=1, total=1), "x", env={}) == "ralph: x complete — 1/1 stories in 1 iteration"
    )
    assert message(ended(), "plan", "todo", env={}) == "ralph: plan complete — 5/5 tasks in 12 iterations"


def test_halt_and_interrupt_messages() -> None:
    halt = ended(ExitReason.CIRCUIT_OPEN, "no progress in 3 iterations", done=2)
    assert message(halt, "auth", env={}) == "ralph: auth stopped (circuit_open): no progress in 3 iterations"
    stopped = ended(ExitReason.INTERRUPTED, "interrupted", iterations=2, done=1)
    assert message(stopped, "auth", env={}) == "ralph: auth interrupted after 2 iterations — 1/5 stories"


def test_message_is_one_clean_line() -> None:
    hostile = "line one\r\n\x1b[31mred\x1b[0m\x07 \x1b]0;title\x07tail\n\n\tend" + "x" * 1000
    text = message(ended(ExitReason.ERROR, hostile), "a\x1b[2Jb", env={})
    assert "\n" not in text and "\r" not in text and "\t" not in text
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", text)
    assert text.startswith("ralph: ab stopped (error): line one red tail end")
    assert len(text) <= 300 and text.endswith("…")


def test_message_masks_secrets() -> None:
    env = {"DEPLOY_TOKEN": "hunter2-very-secret"}
    text = message(
        ended(ExitReason.ERROR, "push failed with hunter2-very-secret and sk-ant-api03-abcdefghijk"), "f", env=env
    )
    assert "hunter2" not in text and "sk-ant" not in text
    assert text == "ralph: f stopped (error): push failed with [REDACTED] and [REDACTED]"


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
    assert notify_end(NotifySettings(), ended(), "f", "/f", env) == []
    assert notify_end(NotifySettings(desktop=True), ended(), "f", "/f", env) == [
        "notification: no desktop notifier found (notify-send, osascript or tt on PATH)"
    ]
    # not notified at all: no warning even with desktop: true
    assert notify_end(NotifySettings(desktop=True), ended(ExitReason.INTERRUPTED), "f", "/f", env) == []


def test_notify_end_never_raises(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    # a URL config would have refused: still only a warning
    warnings = notify_end(NotifySettings(desktop=False, webhook="http://[broken/x"), ended(), "f", "/f", env)
    assert len(warnings) == 1 and warnings[0].startswith("notification: ")
    assert "broken/x" not in warnings[0]


# ---------------------------------------------------------------- the webhook's payload


def test_payload() -> None:
    when = datetime(2026, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)
    body = payload(
        ended(ExitReason.MAX_ITERATIONS, "reached the limit of 12 iterations", done=3),
        "auth",
        "/p/.ralph/auth",
        env={},
        now=when,
        host="box",
    )
    assert body == {
        "event": "halt",
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
        "time": "2026-03-04T05:06:07Z",
        "host": "box",
    }
    assert json.loads(json.dumps(body)) == body


@pytest.mark.parametrize("reason", list(ExitReason), ids=lambda reason: reason.value)
def test_payload_reason_and_exit_code(reason: ExitReason) -> None:
    body = payload(ended(reason, "why\x1b[1m\nnot"), "f", "/f", env={"X_SECRET": "why-not-secret"})
    assert body["event"] == event_kind(reason)
    assert (body["reason"], body["exitCode"]) == (reason.value, reason.exit_code)
    assert body["message"] == "why not"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["time"])


# ---------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5555/hook",
        "https://hooks.example.com/services/T0/B0/xyz",
        "HTTPS://Example.com",
        "http://[::1]:8080/",
    ],
)
def test_accepted_urls(url: str) -> None:
    assert check_webhook_url(url) == url


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("ftp://x", "expected an http:// or https:// URL (not ftp://)"),
        ("file:///etc/passwd", "expected an http:// or https:// URL (not file://)"),
        ("javascript:alert(1)", "expected an http:// or https:// URL"),
        ("example.com/hook", "expected an http:// or https:// URL"),
        ("", "expected an http:// or https:// URL"),
        ("http://", "the URL has no host"),
        ("http:///only/a/path", "the URL has no host"),
        ("http://host:99999/x", "the URL's port is not a number from 1 to 65535"),
        ("http://host/a b", "expected a URL without spaces or control characters"),
        ("http://host/\nInjected: header", "expected a URL without spaces or control characters"),
    ],
)
def test_refused_urls(url: str, error: str) -> None:
    with pytest.raises(ValueError) as caught:
        check_webhook_url(url)
    assert str(caught.value) == error


def test_origin_shows_no_credentials_path_or_query() -> None:
    assert origin("https://user:tok3n@Hooks.Example.com/services/T0/secret?token=abc") == "https://hooks.example.com"
    assert origin("http://127.0.0.1:5555/hook") == "http://127.0.0.1:5555"
    assert origin("http://[::1]:8080/x") == "http://[::1]:8080"


# ---------------------------------------------------------------- config: the notify section


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RALPH_HOME", str(tmp_path / "home"))
    root = tmp_path / "project"
    (root / ".ralph").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def _load(
    project: Path, text: str, env: dict[str, str] | None = None, warnings: list[str] | None = None
) -> NotifySettings:
    (project / ".ralph" / "config.yaml").write_text(text)
    sink = [] if warnings is None else warnings
    settings = load_settings(str(project), {}, env=env or {}, warn=sink.append)
    return settings.notify


def _error(project: Path, text: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(RalphError) as caught:
        _load(project, text, env)
    return str(caught.value)


def test_notify_defaults(project: Path) -> None:
    assert _load(project, "") == NotifySettings(desktop=None, webhook=None, on=("complete", "halt"))


def test_notify_section(project: Path) -> None:
    warnings: list[str] = []
    text = "notify:\n  desktop: false\n  webhook: https://example.com/h?t=1\n  on: [complete, halt, interrupt]\n"
    assert _load(project, text, warnings=warnings) == NotifySettings(
        False, "https://example.com/h?t=1", ("complete", "halt", "interrupt")
    )
    assert warnings == []  # the bare YAML key `on` (read as true by YAML 1.1) is not "unknown"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("auto", None), ("true", True), ("yes", True), ("off", False), ('"auto"', None)],
)
def test_notify_desktop_values(project: Path, value: str, expected: bool | None) -> None:
    assert _load(project, f"notify:\n  desktop: {value}\n").desktop is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[]", ()),
        ("[interrupt]", ("interrupt",)),
        ('"halt, complete"', ("halt", "complete")),
        ("[HALT, halt]", ("halt",)),
    ],
)
def test_notify_on_values(project: Path, value: str, expected: tuple[str, ...]) -> None:
    assert _load(project, f"notify:\n  on: {value}\n").on == expected


def test_notify_webhook_from_the_environment(project: Path) -> None:
    got = _load(project, "notify:\n  webhook: http://a.example/x\n", env={"RALPH_NOTIFY_WEBHOOK": "http://b.example/y"})
    assert got.webhook == "http://b.example/y"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "notify:\n  webhook: ftp://x\n",
            ".ralph/config.yaml: notify.webhook: expected an http:// or https:// URL (not ftp://)",
        ),
        ("notify:\n  webhook: 5\n", ".ralph/config.yaml: notify.webhook: expected an http:// or https:// URL"),
        ("notify:\n  desktop: maybe\n", ".ralph/config.yaml: notify.desktop: expected true, false or auto"),
        (
            "notify:\n  on: [complete, done]\n",
            ".ralph/config.yaml: notify.on: 'done' is not one of complete, halt, interrupt",
        ),
        ("notify:\n  on: 3\n", ".ralph/config.yaml: notify.on: expected a list from complete, halt, interrupt"),
        ("notify: yes\n", ".ralph/config.yaml: notify: expected a mapping"),
    ],
)
def test_notify_errors_name_the_key(project: Path, text: str, error: str) -> None:
    assert _error(project, text) == error


def test_a_bad_webhook_in_the_environment_names_the_variable_not_the_url(project: Path) -> None:
    error = _error(project, "", env={"RALPH_NOTIFY_WEBHOOK": "gopher://secret-token-123@host/"})
    assert error == "environment variable RALPH_NOTIFY_WEBHOOK: expected an http:// or https:// URL (not gopher://)"


def test_unknown_notify_key_is_a_warning(project: Path) -> None:
    warnings: list[str] = []
    _load(project, "notify:\n  email: me@example.com\n", warnings=warnings)
    assert warnings == [".ralph/config.yaml: unknown setting 'notify.email' (ignored)"]


def test_the_commented_example_in_the_default_config_loads(project: Path) -> None:
    block = DEFAULT_PROJECT_CONFIG[DEFAULT_PROJECT_CONFIG.index("# notify:") :]
    lines = [line for line in block.splitlines() if line.startswith("#")]
    uncommented = "\n".join(line[2:] for line in lines[:4]) + "\n"
    warnings: list[str] = []
    assert _load(project, uncommented, warnings=warnings) == NotifySettings(
        None, "https://example.com/hook", ("complete", "halt")
    )
    assert warnings == []


def test_the_readme_shows_every_payload_key() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme[readme.index("#### Notifications") :]
    example = json.loads(re.search(r"```json\n(.*?)\n```", section, re.DOTALL)[1])  # type: ignore[index]
    assert set(example) == set(payload(ended(), "f", "/f", env={}))
    for key in ("notify:", "desktop:", "webhook:", "on:"):
        assert key in readme
