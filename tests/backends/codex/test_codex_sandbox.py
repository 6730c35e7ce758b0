"""Codex's sandbox unable to start any command (bwrap without namespaces, issue 31), read from real Codex 0.169.0
runs under a bubblewrap stopped by seccomp or a full namespace count (tests/fixtures/codex/sandbox_*, README.md)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.agents.codex.parser import CodexJsonParser
from ralphloop.agents.codex.sandbox import bwrap_failure
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome

FIXTURES = Path(__file__).parents[2] / "fixtures" / "codex"
NOW = datetime(2026, 12, 6, 6, 56, 30, tzinfo=UTC)  # when the sandbox captures ran

EPERM = (
    "bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user "
    "namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'."
)
DEBIAN = (  # Debian's bubblewrap 0.8.0 words it its own way
    "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user "
    "namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>."
)
ENOSPC = "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)"
MOUNT = "bwrap: Failed to make / slave: Operation not permitted"
NETLINK = "bwrap: loopback: Failed to create NETLINK_ROUTE socket: Operation not permitted"


def codex_home(tmp_path: Path, name: str) -> Path:
    """A CODEX_HOME holding the capture's session file where Codex wrote it."""
    [session] = (FIXTURES / name).glob("rollout-*.jsonl")
    day = tmp_path / "sessions" / "2026" / "12" / "06"
    day.mkdir(parents=True)
    shutil.copy(session, day / session.name)
    return tmp_path


def parse(name: str, home: Path | None, *, timed_out: bool = False) -> AgentResult:
    folder = FIXTURES / name
    parser = CodexJsonParser(NOW, model="gpt-5.1-codex", codex_home=home)
    parser.feed((folder / "stdout").read_bytes())
    code = int((folder / "rc").read_text())
    outcome = ProcessOutcome(
        exit_code=code, duration_s=1.0, timed_out=timed_out, stderr_tail=(folder / "stderr").read_text()
    )
    return parser.finish(outcome)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("sandbox_userns_eperm_json", EPERM),
        ("sandbox_system_bwrap_eperm_json", DEBIAN),
        ("sandbox_userns_enospc_json", ENOSPC),
        ("sandbox_mount_eperm_json", MOUNT),
        ("sandbox_netlink_eperm_json", NETLINK),
    ],
)
def test_a_sandbox_that_starts_no_command_stops_the_loop_with_bwraps_reason(
    tmp_path: Path, name: str, why: str
) -> None:
    result = parse(name, codex_home(tmp_path, name))
    assert result.failed and result.exit_code == 0  # Codex itself ended as if all went well
    assert result.error_kind is ErrorKind.REFUSED and result.error_kind.fatal  # row 8: halt, not another paid call
    assert result.error is not None
    assert result.error.startswith(f"codex's sandbox could not run its commands: {why.rstrip('.')}. Fix: ")
    assert "--permissions all" in result.error and "user namespaces" in result.error
    assert result.final_text == "I could not run any command: the sandbox refused them."
    assert result.usage is not None and result.session_id  # the call's tokens are still counted


@pytest.mark.parametrize(
    "name", ["sandbox_userns_eperm_json", "sandbox_system_bwrap_eperm_json", "sandbox_userns_enospc_json"]
)
def test_the_stream_alone_tells_when_codex_printed_the_commands_items(name: str) -> None:
    result = parse(name, None)  # a saved log (`ralph analyze`): no session file
    assert result.error_kind is ErrorKind.REFUSED
    assert len(result.tool_errors) == 2


@pytest.mark.parametrize("name", ["sandbox_mount_eperm_json", "sandbox_netlink_eperm_json"])
def test_commands_codex_took_for_sandbox_denials_leave_the_stream_silent(name: str) -> None:
    """These runs print no command item at all: without the session file nothing says a command was tried."""
    assert b"command_execution" not in (FIXTURES / name / "stdout").read_bytes()
    alone = parse(name, None)
    assert not alone.failed and alone.error_kind is None


def test_a_working_sandbox_with_a_failing_command_is_an_ordinary_run(tmp_path: Path) -> None:
    name = "sandbox_ok_failing_commands_json"
    for home in (codex_home(tmp_path, name), None):
        result = parse(name, home)
        assert not result.failed and result.error is None and result.error_kind is None
        assert result.tool_errors == ("three\n",)


def test_ralph_stopping_codex_keeps_its_own_reason(tmp_path: Path) -> None:
    name = "sandbox_userns_eperm_json"
    result = parse(name, codex_home(tmp_path, name), timed_out=True)
    assert result.error_kind is None and result.error is not None and result.error.startswith("timed out")


@pytest.mark.parametrize(
    ("output", "why"),
    [
        (EPERM + "\n", EPERM),
        (f"{MOUNT}\r\n", MOUNT),  # a command run with a terminal
        ("bwrap: setting up uid map: Permission denied\n", "bwrap: setting up uid map: Permission denied"),
        (
            "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
            "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
        ),
        ("bwrap: Unknown option --frobnicate\n", None),  # an agent's own bwrap command, wrong: its business
        ("tests failed\nbwrap: setting up uid map: Permission denied\n", None),  # bwrap's line not first: it ran
        ("Operation not permitted\n", None),
    ],
)
def test_only_bwraps_own_setup_failure_is_the_sandboxs(output: str, why: str | None) -> None:
    assert bwrap_failure(output) == why
