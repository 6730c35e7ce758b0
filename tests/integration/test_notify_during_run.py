"""Notifications around a real `ralph run`: a failing delivery is a warning that never shows a URL's secrets, nor
does any file, `--dry-run` or `ralph validate`; URLs without apprise installed are refused at once, in one line; a
run without URLs never loads apprise. What reaches the receivers while a run goes on (a story done, a blocked stop,
a question at a usage limit) is tests/engine/test_notify_during_run.py's, in-process."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PYTHON, RalphRunner, agent_cmd, loaded_modules
from tests.integration.helpers import assert_one_line_error
from tests.receiver import NO_PROXY, Receiver, receiving

SECRETS = ("t0pic-s3cret", "pa55-s3cret", "tk_s3cret", "hooks-s3cret", "q-s3cret")


@pytest.fixture
def receiver(tmp_path: Path) -> Any:
    with receiving(tmp_path / "received.jsonl") as server:
        yield server


def _config(project: Path, *lines: str) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\nnotify:\n" + "".join(f"  {line}\n" for line in lines))


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
