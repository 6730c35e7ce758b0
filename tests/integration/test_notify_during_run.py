"""Notifications while a real `ralph run` goes on: a story done reaches a loopback ntfy-style receiver through apprise
(`ntfy://127.0.0.1:PORT/TOPIC`) and the plain webhook before the next iteration ends; a blocked stop is needs_input
with the agent's last words; a failing delivery is a warning that never shows a URL's secrets, nor does any file,
`--dry-run` or `ralph validate`; URLs without apprise installed are refused at once, in one line."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PYTHON, RalphRunner, agent_cmd, loaded_modules, write_prd
from tests.integration.conftest import Background
from tests.integration.helpers import assert_one_line_error, wait_until
from tests.integration.on_terminal import OnTerminal, terminal_env
from tests.receiver import NO_PROXY, Receiver, receiving

TOPIC = "ralph-feat-7c1e"
SECRETS = ("t0pic-s3cret", "pa55-s3cret", "tk_s3cret", "hooks-s3cret", "q-s3cret")


@pytest.fixture
def receiver(tmp_path: Path) -> Any:
    with receiving(tmp_path / "received.jsonl") as server:
        yield server


def _steps(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("step_agent.py", str(path))


def _config(project: Path, *lines: str) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nnotify:\n" + "".join(f"  {line}\n" for line in lines))


def test_story_done_and_complete_reach_ntfy_and_the_webhook_during_the_run(
    project: Path, feature: Path, ralph: RalphRunner, receiver: Receiver, tmp_path: Path
) -> None:
    write_prd(feature, 2)
    _config(
        project,
        "desktop: false",
        f"webhook: {receiver.url}",
        f"urls: [{receiver.ntfy(TOPIC)}]",
        "on: [story_done, complete]",
    )
    # Iteration 2 goes on only once S-1's notification came in on both channels (else it exits 3 and the run fails).
    plan = {
        "1": {"write": {"one.txt": "1\n"}, "pass": ["S-1"]},
        "2": {"await": [str(receiver.record), 2], "write": {"two.txt": "2\n"}, "pass": ["S-2"]},
    }

    done = ralph("run", "--no-archive", "--agent-cmd", _steps(tmp_path, plan), env=NO_PROXY)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning" not in done.stderr
    assert [(item["topic"], item["title"], item["message"]) for item in receiver.published()] == [
        (TOPIC, "ralph · feat: done", "S-1 passes · 1/2 stories"),
        (TOPIC, "ralph · feat: done", "S-2 passes · 2/2 stories"),
        (TOPIC, "ralph · feat: complete", "complete — 2/2 stories in 2 iterations"),
    ]
    hooks = receiver.webhook()
    assert [(body["event"], body["text"]) for body in hooks] == [
        ("story_done", "ralph: feat: S-1 passes · 1/2 stories"),
        ("story_done", "ralph: feat: S-2 passes · 2/2 stories"),
        ("complete", "ralph: feat complete — 2/2 stories in 2 iterations"),
    ]
    assert [(body["taskId"], body["iteration"]) for body in hooks[:2]] == [("S-1", 1), ("S-2", 2)]
    assert {body["featureDir"] for body in hooks} == {str(feature)}


def test_a_blocked_stop_needs_your_input_and_says_the_agents_last_words(
    project: Path, feature: Path, ralph: RalphRunner, receiver: Receiver, tmp_path: Path
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text().replace("\nblocked_threshold: 3\n", "\nblocked_threshold: 1\n"))
    _config(project, "desktop: false", f"webhook: {receiver.url}")
    blocked = (
        "I cannot reach the staging database.\n\n---RALPH_STATUS---\nSTATUS: BLOCKED\nEXIT_SIGNAL: false\n"
        "RECOMMENDATION: Need the staging DB password\n---END_RALPH_STATUS---\n"
    )

    done = ralph("run", "-n", "5", "--agent-cmd", _steps(tmp_path, {"*": {"say": blocked}}), env=NO_PROXY)

    assert done.returncode == 1, done.stdout + done.stderr
    [body] = receiver.webhook()
    assert (body["event"], body["reason"], body["title"]) == (
        "needs_input",
        "blocked",
        "ralph · feat: needs your input",
    )
    assert "I cannot reach the staging database" in body["lastMessage"]
    assert body["text"].endswith(f"— the agent's last words: {body['lastMessage']}")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _secret_env(receiver: Receiver) -> dict[str, str]:
    """Notification URLs full of secrets, from the environment (so that no file of the project holds them)."""
    ntfy = f"ntfy://bob:pa55-s3cret@127.0.0.1:{receiver.port}/t0pic-s3cret?token=tk_s3cret"
    webhook = f"http://127.0.0.1:{_closed_port()}/hooks-s3cret/x?token=q-s3cret"
    return {"RALPH_NOTIFY_URLS": ntfy, "RALPH_NOTIFY_WEBHOOK": webhook, **NO_PROXY}


def _assert_no_secret(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret} in {where}: {text}"


def test_a_failing_delivery_never_shows_a_secret_of_its_url(
    project: Path, feature: Path, ralph: RalphRunner, receiver: Receiver, tmp_path: Path
) -> None:
    receiver.status = 500
    _config(project, "desktop: false", "on: [story_done, complete]")
    env = _secret_env(receiver)

    shown = ralph("run", "--dry-run", "--agent-cmd", agent_cmd("story_agent.py"), env=env)
    checked = ralph("validate", env=env)

    assert shown.returncode == 0, shown.stderr
    port = env["RALPH_NOTIFY_WEBHOOK"].split(":")[2].split("/")[0]
    line = f"# Notify: story_done, complete → webhook http://127.0.0.1:{port}, ntfy://127.0.0.1:{receiver.port}"
    assert line in shown.stdout.splitlines()
    assert checked.returncode == 0, checked.stdout + checked.stderr
    _assert_no_secret("--dry-run and validate", shown.stdout + shown.stderr + checked.stdout + checked.stderr)

    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py"), env=env)

    assert done.returncode == 0, done.stdout + done.stderr  # a notification never changes the outcome
    assert len(receiver.published()) == 4  # 3 stories and the end, each tried (and refused)
    webhook, ntfy = [text for text in done.stderr.splitlines() if "notification" in text]  # each told once
    assert webhook.startswith("ralph: warning: notification: webhook http://127.0.0.1:") and "refused" in webhook
    assert ntfy.startswith(f"ralph: warning: notification: ntfy://127.0.0.1:{receiver.port} failed: ")
    assert "Traceback" not in done.stderr
    _assert_no_secret("the run's output", done.stdout + done.stderr)
    for path in [*project.rglob("*"), *(tmp_path / "ralph-home").rglob("*")]:
        if path.is_file():
            _assert_no_secret(str(path), path.read_bytes().decode("utf-8", "replace"))


# apprise "not installed": a finder ahead of the others refuses it, as an interpreter without it would.
WITHOUT_APPRISE = """
import sys
class NoApprise:
    def find_spec(self, name, path=None, target=None):
        if name == "apprise" or name.startswith("apprise."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, NoApprise())
sys.argv = ["ralph", *sys.argv[1:]]
import runpy
runpy.run_module("ralphloop", run_name="__main__")
"""


@pytest.mark.parametrize("command", [["run", "-n", "1", "--agent-cmd", "true"], ["validate"]], ids=["run", "validate"])
def test_urls_without_apprise_are_one_line_naming_the_fix(
    project: Path, feature: Path, ralph_env: dict[str, str], command: list[str]
) -> None:
    _config(project, "urls: ['tgram://123456:tk_s3cret/42']")

    done = subprocess.run(
        [PYTHON, "-c", WITHOUT_APPRISE, *command],
        cwd=project,
        env=ralph_env,
        capture_output=True,
        text=True,
        check=False,
    )

    fix = "pip install 'ralphloop[notify]'"
    if command[0] == "run":
        line = assert_one_line_error(done, ".ralph/config.yaml (notify.urls): ", fix)
    else:  # validate lists each problem on stdout
        assert done.returncode == 1, done.stdout + done.stderr
        [line] = [text for text in done.stdout.splitlines() if "notify.urls" in text]
        assert ".ralph/config.yaml (notify.urls): " in line and fix in line
    assert "apprise" in line and "Traceback" not in done.stdout + done.stderr
    _assert_no_secret("the error", done.stdout + done.stderr)
    assert not (feature / "status.json").exists()


def test_a_run_without_urls_never_loads_apprise(project: Path, feature: Path, ralph_env: dict[str, str]) -> None:
    _config(project, "desktop: true", "webhook: http://127.0.0.1:9/hook", "on: all")

    done, loaded = loaded_modules(["run", "-n", "1", "--agent-cmd", "true"], project, {**ralph_env, **NO_PROXY})

    assert done.returncode == 1, done.stderr  # one iteration that finishes nothing
    assert sorted(name for name in loaded if name.split(".")[0] in ("apprise", "requests", "markdown")) == []


def test_a_question_at_a_usage_limit_is_notified_while_it_waits_for_the_answer(
    project: Path, feature: Path, ralph_env: dict[str, str], background: Background, receiver: Receiver, tmp_path: Path
) -> None:
    _config(project, "desktop: false", f"webhook: {receiver.url}", "on: [needs_input, usage_limit]")
    limit = "Claude AI usage limit reached|1893456000"  # 2030-01-01T00:00:00Z
    cmd = agent_cmd("limit_once.py", str(tmp_path / "marker"), limit)
    run = OnTerminal(
        ["run", "-n", "3", "--agent-cmd", cmd], project, {**terminal_env(ralph_env), **NO_PROXY}, background
    )
    try:
        assert wait_until(lambda: "[w]ait/[e]xit:" in run.text or run.proc.poll() is not None), run.text
        # nobody has answered yet: the phone already says the loop waits for its user
        assert wait_until(lambda: any(body["event"] == "needs_input" for body in receiver.webhook())), run.text
        run.type(b"e\n")
        code, output = run.finish()
    finally:
        run.close()
    assert code == 2, output
    events = [body["event"] for body in receiver.webhook()]
    assert events[:2] == ["usage_limit", "needs_input"], events  # the limit (with its reset), then the question
    limited = receiver.webhook()[0]
    assert "2030-01-01T00:00:00Z" in json.dumps(limited), limited
