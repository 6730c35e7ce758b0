"""Notifications at the CLI's edge: a real `ralph run` whose webhook does not answer ends as it would have, with one
warning line that keeps the URL's secrets; a bad webhook URL is one error line before anything is written; a dry run
notifies nothing. Then the two effects against real peers: a loopback webhook that records the POST, a notifier
process that hangs.

What a run's end sends, to whom, and when (complete, halted, interrupted, archived, the desktop notifier and its
failure) is tests/engine/test_notify.py's, in-process.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralphloop.notify.deliver import post_json, run_notifier
from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.engine.test_notify import argvs, fake_notify_send, notify_config, warnings_in
from tests.integration.helpers import assert_one_line_error, read_pid, wait_dead
from tests.receiver import NO_PROXY, Receiver, receiving


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiving() as server:
        yield server


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_unreachable_webhook_is_one_warning_without_the_url(
    project: Path, feature: Path, ralph: RalphRunner
) -> None:
    port = _closed_port()
    notify_config(project, "desktop: false", f'webhook: "http://127.0.0.1:{port}/hooks/s3cr3t-path?token=t0k3n"')

    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py"), env=NO_PROXY)

    assert done.returncode == 0, done.stdout + done.stderr  # unchanged by the failed notification
    assert warnings_in(done.stderr) == [
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
        notify_config(project, "webhook: ftp://x")
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
    env, record = fake_notify_send(tmp_path)
    notify_config(project, f"webhook: {hook.url}")

    done = ralph("run", "--dry-run", "--agent-cmd", agent_cmd("say.py", "nothing"), env={**env, **NO_PROXY})

    assert done.returncode == 0, done.stdout + done.stderr
    assert hook.requests == []
    assert argvs(record) == []


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
