"""Notifications when a real `ralph run` ends: a loopback webhook records the POST, a fake `notify-send` on PATH
records its argv. A failed notification is one warning line; the run's exit code and files do not change."""

from __future__ import annotations

import json
import os
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralphloop.notify.deliver import post_json, run_notifier
from tests.conftest import PYTHON, RalphRunner, agent_cmd, read_json
from tests.integration.helpers import assert_one_line_error, read_pid, wait_dead
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


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiving() as server:
        yield server


def _notify_config(project: Path, *lines: str) -> None:
    """Append a `notify:` section to the .ralph/config.yaml `ralph init` wrote."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nnotify:\n" + "".join(f"  {line}\n" for line in lines))


def _fake_notify_send(tmp_path: Path, *, exit_code: int = 0, complaint: str = "") -> tuple[dict[str, str], Path]:
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


def _argvs(record: Path) -> list[list[str]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "warning" in line]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_archived_feature_is_posted_where_it_was_moved_to(
    project: Path, feature: Path, ralph: RalphRunner, hook: Receiver
) -> None:
    _notify_config(project, "desktop: false", f"webhook: {hook.url}")

    done = ralph("run", "--agent-cmd", agent_cmd("story_agent.py"), env=NO_PROXY)

    assert done.returncode == 0, done.stdout + done.stderr
    moved = next((project / ".ralph" / "archive").iterdir())
    assert not feature.exists()
    assert hook.bodies()[0]["featureDir"] == str(moved)
    assert f"(its metrics log with it: {moved.relative_to(project)}/ralph_metrics.jsonl)" in done.stdout


def test_a_completed_run_posts_its_outcome(project: Path, feature: Path, ralph: RalphRunner, hook: Receiver) -> None:
    _notify_config(project, "desktop: false", f"webhook: {hook.url}")

    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py"), env=NO_PROXY)

    assert done.returncode == 0, done.stdout + done.stderr
    assert _warnings(done.stderr) == []
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
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["time"])
    assert body["host"] == socket.gethostname()


def test_a_halted_run_posts_halt_to_the_url_from_the_environment(
    project: Path, feature: Path, ralph: RalphRunner, hook: Receiver
) -> None:
    _notify_config(project, "desktop: false")

    done = ralph(
        "run",
        "-n",
        "1",
        "--agent-cmd",
        agent_cmd("say.py", "nothing"),
        env={"RALPH_NOTIFY_WEBHOOK": hook.url, **NO_PROXY},
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert _warnings(done.stderr) == []
    [body] = hook.bodies()
    status = read_json(feature / "status.json")
    assert body["event"] == "halted"
    assert (body["reason"], body["exitCode"]) == ("max_iterations", 1)
    assert (body["iterations"], body["storiesComplete"], body["storiesTotal"]) == (1, 0, 3)
    assert body["message"] == status["exitMessage"]
    assert body["text"] == f"ralph: feat stopped (max_iterations): {status['exitMessage']}"


def test_the_desktop_notifier_gets_the_message(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    env, record = _fake_notify_send(tmp_path)

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "nothing"), env=env)

    assert done.returncode == 1, done.stdout + done.stderr
    assert _warnings(done.stderr) == []
    message = read_json(feature / "status.json")["exitMessage"]
    assert _argvs(record) == [["--app-name=ralph", "ralph", f"ralph: feat stopped (max_iterations): {message}"]]


def test_desktop_false_turns_the_notifier_off(project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    env, record = _fake_notify_send(tmp_path)
    _notify_config(project, "desktop: false")

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "nothing"), env=env)

    assert done.returncode == 1, done.stdout + done.stderr
    assert _argvs(record) == []


def test_a_failing_desktop_notifier_is_one_warning(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    env, record = _fake_notify_send(tmp_path, exit_code=3, complaint="Cannot autolaunch D-Bus\x1b[31m without X11\n")

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "nothing"), env=env)

    assert done.returncode == 1, done.stdout + done.stderr
    assert len(_argvs(record)) == 1
    assert _warnings(done.stderr) == [
        "ralph: warning: notification: notify-send failed: exit code 3: Cannot autolaunch D-Bus without X11"
    ]


@pytest.mark.parametrize("opted_in", [False, True], ids=["default", "on-interrupt"])
def test_an_interrupt_is_notified_only_when_asked(
    project: Path, feature: Path, ralph: RalphRunner, hook: Receiver, tmp_path: Path, opted_in: bool
) -> None:
    env, record = _fake_notify_send(tmp_path)
    # ralph 0.x's names, still read: halt is halted, interrupt is interrupted
    _notify_config(project, f"webhook: {hook.url}", *(["on: [complete, halt, interrupt]"] if opted_in else []))

    done = ralph("run", "-n", "3", "--agent-cmd", agent_cmd("interrupt_ralph.py"), env={**env, **NO_PROXY})

    assert done.returncode == 130, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "interrupted"
    assert _warnings(done.stderr) == []
    if not opted_in:
        assert hook.requests == []
        assert _argvs(record) == []
        return
    [body] = hook.bodies()
    assert (body["event"], body["reason"], body["exitCode"]) == ("interrupted", "interrupted", 130)
    assert _argvs(record) == [
        ["--app-name=ralph", "ralph", "ralph: feat interrupted after 0 iterations (+1 not counted) — 0/3 stories"]
    ]


def test_an_unreachable_webhook_is_one_warning_without_the_url(
    project: Path, feature: Path, ralph: RalphRunner
) -> None:
    port = _closed_port()
    _notify_config(project, "desktop: false", f'webhook: "http://127.0.0.1:{port}/hooks/s3cr3t-path?token=t0k3n"')

    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py"), env=NO_PROXY)

    assert done.returncode == 0, done.stdout + done.stderr  # unchanged by the failed notification
    assert _warnings(done.stderr) == [
        f"ralph: warning: notification: webhook http://127.0.0.1:{port} failed: connection refused"
    ]
    assert "Traceback" not in done.stderr + done.stdout
    for secret in ("s3cr3t", "t0k3n", "/hooks"):
        assert secret not in done.stderr + done.stdout
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("complete", "complete")
    assert [story["passes"] for story in read_json(feature / "prd.json")["userStories"]] == [True, True, True]
    assert read_json(feature / "state.json")["last_exit_reason"] == "complete"


@pytest.mark.parametrize("where", ["config", "env"])
def test_a_bad_webhook_url_is_a_one_line_error(project: Path, feature: Path, ralph: RalphRunner, where: str) -> None:
    env = {}
    if where == "config":
        _notify_config(project, "webhook: ftp://x")
    else:
        env["RALPH_NOTIFY_WEBHOOK"] = "ftp://x"

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "nothing"), env=env)

    needle = ".ralph/config.yaml: notify.webhook" if where == "config" else "RALPH_NOTIFY_WEBHOOK"
    line = assert_one_line_error(done, needle, "http:// or https://")
    assert line.startswith("ralph:")
    assert not (feature / "status.json").exists()
    assert not (feature / "logs").exists()


def test_a_dry_run_notifies_nothing(
    project: Path, feature: Path, ralph: RalphRunner, hook: Receiver, tmp_path: Path
) -> None:
    env, record = _fake_notify_send(tmp_path)
    _notify_config(project, f"webhook: {hook.url}")

    done = ralph("run", "--dry-run", "--agent-cmd", agent_cmd("say.py", "nothing"), env={**env, **NO_PROXY})

    assert done.returncode == 0, done.stdout + done.stderr
    assert hook.requests == []
    assert _argvs(record) == []


# ---------------------------------------------------------------- the two effects, against real peers


def test_post_json_sends_credentials_as_a_header_not_in_the_host(
    hook: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in NO_PROXY.items():
        monkeypatch.setenv(name, value)
    port = hook.server_address[1]

    assert post_json(f"http://bot:p%40ss@127.0.0.1:{port}/hook?x=1", {"a": "é"}, 5) is None

    [request] = hook.requests
    assert request["path"] == "/hook?x=1"
    assert request["headers"]["Authorization"] == "Basic Ym90OnBAc3M="  # bot:p@ss
    assert json.loads(request["body"]) == {"a": "é"}


@pytest.mark.parametrize(
    ("status", "headers", "problem"),
    [
        (500, {}, "HTTP 500 Internal Server Error"),
        (302, {"Location": "http://127.0.0.1:1/elsewhere"}, "HTTP 302 Found"),
    ],
)
def test_post_json_reports_a_bad_answer_and_follows_no_redirect(
    hook: Receiver, monkeypatch: pytest.MonkeyPatch, status: int, headers: dict[str, str], problem: str
) -> None:
    for name, value in NO_PROXY.items():
        monkeypatch.setenv(name, value)
    hook.status, hook.extra_headers = status, headers

    assert post_json(hook.url, {}, 5) == problem
    assert len(hook.requests) == 1


def test_a_notifier_that_hangs_is_killed_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    hang = [sys.executable, str(Path(__file__).parents[1] / "agents" / "hang_with_grandchild.py"), str(pidfile)]

    problem = run_notifier(hang, dict(os.environ), 1.0)

    assert problem == "no answer within 1s"
    grandchild = read_pid(pidfile)
    if grandchild is not None:  # it may not have started within the second
        assert wait_dead(grandchild)
