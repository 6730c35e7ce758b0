"""Find, or install once, a real agent CLI that the end-to-end tests drive (claude_cli.py, codex_cli.py).

The pinned package is installed with npm into a cache folder shared by all test runs:
`$RALPH_TEST_CACHE/<folder>-<version>` (default parent `~/.cache/ralphloop-tests`). The install runs under an
exclusive file lock, goes into a temporary sibling folder and is renamed into place only once `BINARY --version`
prints the pinned version, so a concurrent or interrupted run never sees a half-finished install (cli_cache.py).
The tests are skipped only when npm is missing or the registry cannot be reached; any other install failure fails
loudly with npm's output.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Final, NoReturn

import pytest

from tests.e2e.cli_cache import (
    cache_dir,
    checked_version_output,
    install_once,
    put_in_place,
    staging_dir,
    version_output,
)

INSTALL_TIMEOUT_S: Final = 900

# npm error codes that mean "no route to the registry", as opposed to a broken package or a full disk.
_UNREACHABLE: Final = re.compile(
    r"\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ENOTCACHED|"
    r"ERR_SOCKET_TIMEOUT|UND_ERR_CONNECT_TIMEOUT|ESOCKETTIMEDOUT)\b|npm (?:ERR!|error) network"
)


@dataclass(frozen=True)
class PinnedCli:
    """An agent CLI the end-to-end tests drive, pinned to one npm version."""

    label: str  # "Claude Code", for messages
    package: str  # "@anthropic-ai/claude-code"
    version: str
    binary: str  # the executable's name in node_modules/.bin
    folder: str  # the cache folder's name, before "-<version>"
    version_ok: Callable[[str], bool]  # whether `BINARY --version` printed the pinned version

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    def cache_dir(self) -> Path:
        """The folder the pinned CLI is installed into (its `node_modules` lives inside)."""
        return cache_dir(self.folder, self.version)

    def executable(self) -> str:
        """The path of the pinned binary, installing it on first use; skips the test when offline."""
        target = self.cache_dir()
        if self._installed(target):
            return str(self._binary(target))
        if shutil.which("npm") is None or shutil.which("node") is None:
            pytest.skip(f"npm/node not installed: cannot install {self.spec} for the end-to-end tests")
        install_once(target, self._installed, partial(_install, self))
        return str(self._binary(target))

    def _binary(self, prefix: Path) -> Path:
        return prefix / "node_modules" / ".bin" / self.binary

    def _installed(self, prefix: Path) -> bool:
        return self.version_ok(checked_version_output(prefix, self._binary(prefix), 60))


def _skip_if_registry_unreachable(spec: str) -> None:
    """Ask the registry for the package's metadata without retries, so an offline machine skips in a second.

    npm's own retries make a failing `npm install` take over a minute offline. Any other failure here is left
    for the install itself to report in full.
    """
    command = ["npm", "view", spec, "version", "--fetch-retries=0"]
    try:
        done = subprocess.run(
            command, check=False, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm registry unreachable: `{' '.join(command)}` timed out")
    output = done.stdout + done.stderr
    if done.returncode != 0 and _UNREACHABLE.search(output):
        pytest.skip(f"npm registry unreachable, cannot install {spec}: {_error_line(output)}")


def _install(cli: PinnedCli, target: Path) -> None:
    """Install into a temporary sibling folder, check it, then rename it over `target`."""
    _skip_if_registry_unreachable(cli.spec)
    staging = staging_dir(target)
    try:
        command = ["npm", "install", "--prefix", str(staging), cli.spec, "--no-audit", "--no-fund"]
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
            took = f"`{' '.join(command)}` took more than {INSTALL_TIMEOUT_S} s"
            _fail(cli, took, str(error.stdout), str(error.stderr))
        output = done.stdout + done.stderr
        if done.returncode != 0:
            if _UNREACHABLE.search(output):
                pytest.skip(f"npm registry unreachable, cannot install {cli.spec}: {_error_line(output)}")
            _fail(cli, f"`{' '.join(command)}` exited with {done.returncode}", done.stdout, done.stderr)
        version = version_output(cli._binary(staging), 60)
        if not cli.version_ok(version):
            printed = f"installed {cli.spec} but `{cli.binary} --version` printed {version!r}"
            _fail(cli, printed, done.stdout, done.stderr)
        put_in_place(staging, target)
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


def _fail(cli: PinnedCli, what: str, stdout: str, stderr: str) -> NoReturn:
    pytest.fail(f"installing the {cli.label} CLI failed: {what}\n--- npm stdout\n{stdout}\n--- npm stderr\n{stderr}")
