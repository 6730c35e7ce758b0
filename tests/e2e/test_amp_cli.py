"""The real Amp CLI (pinned 0.0.1790142911-g7618fb, installed from npm by the tests) and ralph's amp backend.

An Amp thread runs on Amp's own server (thread actors over a WebSocket), which no loopback fake here speaks, so a
whole run is tested with a replay binary (tests/integration/test_amp_backend.py). What the real CLI proves here:
every flag ralph passes exists at the pinned version (`--dangerously-allow-all` is hidden from `--help`: it is
proved by the CLI taking it), the prompt is read from stdin, and `ralph run --agent amp` turns the real CLI's
failures before a thread (a 401 from a loopback HTTP server, no login at all) into a stop with the fix.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ralphloop.agents.amp.backend import AmpAgent
from ralphloop.config.settings import load_settings
from ralphloop.core.protocols import AgentCommand, AgentRequest
from tests.conftest import RalphRunner, read_json
from tests.e2e.amp_cli import AMP_VERSION, amp_executable

FAKE_KEY = "sgamp_user_fake_0000"

pytestmark = pytest.mark.timeout(900)  # the first test may pay for the npm install


@pytest.fixture(scope="session")
def amp_bin() -> str:
    """The real `amp` binary of the pinned version (installed once into the test cache)."""
    return amp_executable()


class Answers401(BaseHTTPRequestHandler):
    """Amp's server as a wrong key sees it: every request gets 401. The paths asked for are recorded."""

    seen: list[tuple[str, str, bool]]

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.seen.append((self.command, self.path, self.headers.get("Authorization") == f"Bearer {FAKE_KEY}"))
        body = b'{"error": "Unauthorized"}'
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def amp_server() -> Iterator[tuple[str, list[tuple[str, str, bool]]]]:
    """A loopback HTTP server answering 401 to everything: its URL, and the requests it saw."""
    seen: list[tuple[str, str, bool]] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (Answers401,), {"seen": seen}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def amp_env(home: Path, url: str, *, key: bool = True) -> dict[str, str]:
    """What the CLI is run with: a private HOME, Amp's server at `url`, a fake key (or none)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "AMP_URL": url}
    if key:
        env["AMP_API_KEY"] = FAKE_KEY
    return env


def ralphs_command(amp_bin: str, tmp_path: Path, permissions: str, model: str | None) -> AgentCommand:
    """The command ralph's amp backend builds, from ralph's own settings."""
    env = {"RALPH_HOME": str(tmp_path / "ralph-home"), "RALPH_AMP_COMMAND": amp_bin, "RALPH_PERMISSIONS": permissions}
    settings = load_settings(str(tmp_path), {}, env=env)
    request = AgentRequest(
        prompt="Fix the bug in a.py.\nSay <promise>COMPLETE</promise> when done.\n",
        iteration=1,
        project_root=str(tmp_path),
        feature_dir=str(tmp_path),
        prompt_file=str(tmp_path / "iteration-1.prompt.md"),
        task_id="S-1",
        model=model,
    )
    return AmpAgent(settings).command(request)


def test_the_pinned_version_lists_the_flags_ralph_passes(amp_bin: str, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", **amp_env(tmp_path / "home", "http://amp.invalid")}
    version = subprocess.run([amp_bin, "--version"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert version.stdout.startswith(AMP_VERSION)
    shown = subprocess.run([amp_bin, "--help"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert shown.returncode == 0, shown.stderr
    for flag in ("-x, --execute [message]", "--stream-json", "-m, --mode <value>", "--no-ide", "AMP_API_KEY"):
        assert flag in shown.stdout, flag
    assert "--dangerously-allow-all" not in shown.stdout  # hidden: the next test proves the CLI takes it


@pytest.mark.parametrize(("permissions", "model"), [("edits", None), ("all", "high")])
def test_the_cli_takes_every_flag_ralph_passes_and_reads_the_prompt_from_stdin(
    amp_bin: str, tmp_path: Path, amp_server: tuple[str, list[tuple[str, str, bool]]], permissions: str, model: str
) -> None:
    url, seen = amp_server
    command = ralphs_command(amp_bin, tmp_path, permissions, model)
    assert ("--dangerously-allow-all" in command.argv) is (permissions == "all")
    env = {"PATH": "/usr/bin:/bin", **amp_env(tmp_path / "home", url)}

    def call(argv: tuple[str, ...], stdin: bytes) -> subprocess.CompletedProcess[str]:
        text = stdin.decode()
        return subprocess.run(argv, env=env, input=text, capture_output=True, text=True, timeout=60, check=False)

    taken = call(command.argv, command.stdin)
    # Past the flags and the prompt: it asked the server who the key belongs to, with ralph's key.
    assert taken.returncode == 1 and "Invalid or missing API key" in taken.stderr, taken.stderr
    assert ("POST", "/api/internal?getUserInfo", True) in seen
    no_prompt = call(command.argv, b"")
    assert "User message must be provided through stdin" in no_prompt.stderr  # stdin is where the prompt goes
    bogus = call((*command.argv, "--no-such-flag"), command.stdin)
    assert "unknown option '--no-such-flag'" in bogus.stderr  # an unknown flag would have been refused


def test_ralph_run_stops_at_the_real_clis_401_with_the_fix(
    amp_bin: str,
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    tmp_path: Path,
    amp_server: tuple[str, list[tuple[str, str, bool]]],
) -> None:
    url, seen = amp_server
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"\namp:\n  command: {json.dumps(amp_bin)}\n")
    done = ralph("run", "-f", "feat", "--agent", "amp", env=amp_env(tmp_path / "home", url))
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "amp login" in said and "Traceback" not in said
    assert read_json(feature / "status.json")["exitReason"] == "agent_error"
    assert len([path for _, path, _ in seen if path == "/api/internal?getUserInfo"]) >= 1
    log = (feature / "logs" / "iteration-1.log").read_text()
    assert "Invalid or missing API key" in log


def test_ralph_run_without_a_login_stops_with_the_fix(
    amp_bin: str,
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    ralph_env: dict[str, str],
    tmp_path: Path,
    amp_server: tuple[str, list[tuple[str, str, bool]]],
) -> None:
    url, _ = amp_server
    ralph_env.pop("AMP_API_KEY", None)  # the runner reads this dict when it runs: no key at all
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"\namp:\n  command: {json.dumps(amp_bin)}\n")
    done = ralph("run", "-f", "feat", "--agent", "amp", env=amp_env(tmp_path / "home", url, key=False))
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    assert "amp login" in said  # Amp started its login flow, which failed: AUTH, not a failed attempt
    assert read_json(feature / "status.json")["exitReason"] == "agent_error"
    assert "Login failed" in (feature / "logs" / "iteration-1.log").read_text()
