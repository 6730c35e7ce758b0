"""Find, or install once, the real Claude Code CLI that the end-to-end tests drive.

The pinned package is installed with npm into a cache folder shared by all test runs:
`$RALPH_TEST_CACHE/claude-code-<version>` (default parent `~/.cache/ralphloop-tests`). The install runs under an
exclusive file lock, goes into a temporary sibling folder and is renamed into place only once `claude --version`
works, so a concurrent or interrupted run never sees a half-finished install. The tests are skipped only when
npm is missing or the registry cannot be reached; any other install failure fails loudly with npm's output.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Final, NoReturn

import pytest

__all__ = ["CLAUDE_CODE_VERSION", "cache_dir", "claude_executable"]

CLAUDE_CODE_VERSION: Final = "2.1.329"
PACKAGE: Final = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
INSTALL_TIMEOUT_S: Final = 900

# npm error codes that mean "no route to the registry", as opposed to a broken package or a full disk.
_UNREACHABLE: Final = re.compile(
    r"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ENOTCACHED|"
    r"ERR_SOCKET_TIMEOUT|UND_ERR_CONNECT_TIMEOUT|ESOCKETTIMEDOUT)\b|npm (?:ERR!|error) network"
)


def cache_dir() -> Path:
    """The folder the pinned CLI is installed into (its `node_modules` lives inside)."""
    parent = os.environ.get("RALPH_TEST_CACHE") or Path.home() / ".cache" / "ralphloop-tests"
    return Path(parent) / f"claude-code-{CLAUDE_CODE_VERSION}"


def claude_executable() -> str:
    """The path of the pinned `claude` binary, installing it on first use; skips the test when offline."""
    target = cache_dir()
    if _version_ok(_binary(target)):
        return str(_binary(target))
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip(f"npm/node not installed: cannot install {PACKAGE} for the end-to-end tests")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, even on skip or failure
        if not _version_ok(_binary(target)):  # another process may have installed it while we waited
            _install(target)
    return str(_binary(target))


def _binary(prefix: Path) -> Path:
    return prefix / "node_modules" / ".bin" / "claude"


def _version_output(binary: Path) -> str:
    """`claude --version` output, or a description of why it could not run."""
    if not binary.exists():
        return f"{binary} does not exist"
    try:
        done = subprocess.run(
            [str(binary), "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{binary} --version: {error}"
    return done.stdout + done.stderr


def _version_ok(binary: Path) -> bool:
    return _version_output(binary).startswith(CLAUDE_CODE_VERSION + " ")


def _skip_if_registry_unreachable() -> None:
    """Ask the registry for the package's metadata without retries, so an offline machine skips in a second.

    npm's own retries make a failing `npm install` take over a minute offline. Any other failure here is left
    for the install itself to report in full.
    """
    command = ["npm", "view", PACKAGE, "version", "--fetch-retries=0"]
    try:
        done = subprocess.run(
            command, check=False, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm registry unreachable: `{' '.join(command)}` timed out")
    output = done.stdout + done.stderr
    if done.returncode != 0 and _UNREACHABLE.search(output):
        pytest.skip(f"npm registry unreachable, cannot install {PACKAGE}: {_error_line(output)}")


def _install(target: Path) -> None:
    """Install into a temporary sibling folder, check it, then rename it over `target`."""
    _skip_if_registry_unreachable()
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.installing.", dir=target.parent))
    try:
        command = ["npm", "install", "--prefix", str(staging), PACKAGE, "--no-audit", "--no-fund"]
        try:
            done = subprocess.run(
                command,
                check=False,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as error:
            _fail(f"`{' '.join(command)}` took more than {INSTALL_TIMEOUT_S} s", str(error.stdout), str(error.stderr))
        output = done.stdout + done.stderr
        if done.returncode != 0:
            if _UNREACHABLE.search(output):
                pytest.skip(f"npm registry unreachable, cannot install {PACKAGE}: {_error_line(output)}")
            _fail(f"`{' '.join(command)}` exited with {done.returncode}", done.stdout, done.stderr)
        version = _version_output(_binary(staging))
        if not version.startswith(CLAUDE_CODE_VERSION + " "):
            _fail(f"installed {PACKAGE} but `claude --version` printed {version!r}", done.stdout, done.stderr)
        if target.exists():  # a broken or different install: move it aside, then delete it
            stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale.", dir=target.parent))
            target.rename(stale / "old")
            shutil.rmtree(stale, ignore_errors=True)
        staging.chmod(0o755)  # mkdtemp made it private; the installed tree should read like any npm prefix
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _error_line(output: str) -> str:
    """The most telling line of npm's output: the failed request with its reason, else the error code."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for wanted in (re.compile(r"request to .* failed"), _UNREACHABLE):
        for line in lines:
            if wanted.search(line):
                return line
    return lines[-1] if lines else "(no output)"


def _fail(what: str, stdout: str, stderr: str) -> NoReturn:
    pytest.fail(f"installing the Claude Code CLI failed: {what}\n--- npm stdout\n{stdout}\n--- npm stderr\n{stderr}")
