"""Find, or install once, a real agent CLI from PyPI that the end-to-end tests drive (aider_cli.py).

The pinned package is installed with pip into a virtualenv of its own in the cache folder shared by all test
runs, `$RALPH_TEST_CACHE/<folder>-<version>` (default parent `~/.cache/ralphloop-tests`), as npm_cli.py does for
npm: under an exclusive file lock, into a temporary sibling folder, renamed into place only once `BINARY
--version` prints the pinned version, so a concurrent or interrupted run never sees a half-finished install.
A virtualenv is not relocatable (pip writes its path into the console scripts), so the tests run the CLI
through a launcher of their own, `<folder>/run-<binary>`, that finds the virtualenv's Python beside itself.
The tests are skipped only when PyPI cannot be reached; any other install failure fails loudly with pip's
output.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
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

INSTALL_TIMEOUT_S: Final = 1800

# pip's words for "no route to the index", as opposed to a broken package or a full disk.
_UNREACHABLE: Final = re.compile(
    r"NewConnectionError|NameResolutionError|Failed to establish a new connection|Temporary failure in name "
    r"resolution|Name or service not known|Network is unreachable|ConnectTimeoutError|ReadTimeoutError|"
    r"ProxyError|Could not fetch URL|connection broken",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PinnedPypiCli:
    """An agent CLI the end-to-end tests drive, pinned to one PyPI version."""

    label: str  # "aider", for messages
    package: str  # "aider-chat"
    version: str
    binary: str  # the launcher's name: run-<binary>
    entry_point: str  # the console script's target, "aider.main:main"
    folder: str  # the cache folder's name, before "-<version>"
    version_ok: Callable[[str], bool]  # whether `BINARY --version` printed the pinned version

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}"

    def cache_dir(self) -> Path:
        """The folder the pinned CLI's virtualenv is installed into."""
        return cache_dir(self.folder, self.version)

    def executable(self) -> str:
        """The path of the pinned CLI's launcher, installing it on first use; skips the test when offline."""
        target = self.cache_dir()
        if self._installed(target):
            return str(self.launcher(target))
        install_once(target, self._installed, partial(_install, self))
        return str(self.launcher(target))

    def launcher(self, prefix: Path) -> Path:
        return prefix / f"run-{self.binary}"

    def site_packages(self) -> Path:
        """The installed virtualenv's site-packages (for data files a test needs from the CLI's packages)."""
        found = sorted(self.cache_dir().glob("lib/python*/site-packages"))
        if not found:
            raise FileNotFoundError(f"no site-packages under {self.cache_dir()}")
        return found[0]

    def _installed(self, prefix: Path) -> bool:
        return self.version_ok(checked_version_output(prefix, self.launcher(prefix), 120))

    def write_launcher(self, prefix: Path) -> None:
        """`run-<binary>`: the console script's work, with the virtualenv's Python found beside the launcher."""
        module, _, function = self.entry_point.partition(":")
        # argv[0] as the console script has it: the CLI names itself after it (`aider --version`: "aider 0.86.2")
        code = f"import sys; sys.argv[0] = {self.binary!r}; from {module} import {function}; sys.exit({function}())"
        launcher = self.launcher(prefix)
        launcher.write_text(f'#!/bin/sh\nexec "$(dirname "$0")/bin/python" -c {shlex.quote(code)} "$@"\n')
        launcher.chmod(0o755)


def _pip(python: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    command = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    return subprocess.run(
        command, check=False, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def _skip_if_index_unreachable(python: Path, spec: str, scratch: Path) -> None:
    """Fetch the package's own distribution once, without retries, so an offline machine skips in seconds.

    pip's own retries make a failing install take minutes offline. Any other failure here is left for the
    install itself to report in full.
    """
    try:
        done = _pip(
            python, "download", "--no-deps", "--retries", "0", "--timeout", "30", "-d", str(scratch), spec, timeout=300
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"PyPI unreachable: downloading {spec} timed out")
    output = done.stdout + done.stderr
    if done.returncode != 0 and _UNREACHABLE.search(output):
        pytest.skip(f"PyPI unreachable, cannot install {spec}: {_error_line(output)}")


def _install(cli: PinnedPypiCli, target: Path) -> None:
    """Make a virtualenv in a temporary sibling folder, install into it, check it, then rename it over `target`."""
    staging = staging_dir(target)
    try:
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(staging)], check=False, capture_output=True, text=True, timeout=300
        )
        if made.returncode != 0:
            _fail(cli, f"`{sys.executable} -m venv` exited with {made.returncode}", made.stdout, made.stderr)
        python = staging / "bin" / "python"
        _skip_if_index_unreachable(python, cli.spec, staging / "download")
        try:
            done = _pip(python, "install", cli.spec, timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired as error:
            _fail(
                cli,
                f"pip install {cli.spec} took more than {INSTALL_TIMEOUT_S} s",
                str(error.stdout),
                str(error.stderr),
            )
        output = done.stdout + done.stderr
        if done.returncode != 0:
            if _UNREACHABLE.search(output):
                pytest.skip(f"PyPI unreachable, cannot install {cli.spec}: {_error_line(output)}")
            _fail(cli, f"pip install {cli.spec} exited with {done.returncode}", done.stdout, done.stderr)
        shutil.rmtree(staging / "download", ignore_errors=True)
        cli.write_launcher(staging)
        version = version_output(cli.launcher(staging), 120)
        if not cli.version_ok(version):
            _fail(
                cli, f"installed {cli.spec} but `{cli.binary} --version` printed {version!r}", done.stdout, done.stderr
            )
        put_in_place(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _error_line(output: str) -> str:
    """The most telling line of pip's output: the failed connection, else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if _UNREACHABLE.search(line)), lines[-1] if lines else "(no output)")


def _fail(cli: PinnedPypiCli, what: str, stdout: str, stderr: str) -> NoReturn:
    pytest.fail(f"installing {cli.label} failed: {what}\n--- pip stdout\n{stdout}\n--- pip stderr\n{stderr}")
