"""What npm_cli.py and pypi_cli.py share about a pinned CLI's install: its folder in the cache every test run
shares (`$RALPH_TEST_CACHE/<folder>-<version>`, default parent `~/.cache/ralphloop-tests`), installing it once
under an exclusive file lock, its `--version` output, and moving a checked install into place, so that a
concurrent or interrupted run never sees a half-finished one."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_dir(folder: str, version: str) -> Path:
    """The folder a pinned CLI is installed into."""
    parent = os.environ.get("RALPH_TEST_CACHE") or Path.home() / ".cache" / "ralphloop-tests"
    return Path(parent) / f"{folder}-{version}"


def install_once(target: Path, installed: Callable[[Path], bool], install: Callable[[Path], None]) -> None:
    """Run `install(target)` under an exclusive lock beside `target`, unless it is `installed` by then."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, even on skip or failure
        if not installed(target):  # another process may have installed it while we waited
            install(target)


def staging_dir(target: Path) -> Path:
    """A new private folder beside `target` to install into before it is checked."""
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.installing.", dir=target.parent))


def put_in_place(staging: Path, target: Path) -> None:
    """Rename a checked install over `target`: a broken or different install there is moved aside, then deleted."""
    if target.exists():
        stale = Path(tempfile.mkdtemp(prefix=f".{target.name}.stale.", dir=target.parent))
        target.rename(stale / "old")
        shutil.rmtree(stale, ignore_errors=True)
    staging.chmod(0o755)  # mkdtemp made it private; the installed tree should read like any other install
    staging.rename(target)


def version_output(binary: Path, timeout: float) -> str:
    """`BINARY --version` output, or a description of why it could not run."""
    if not binary.exists():
        return f"{binary} does not exist"
    try:
        done = subprocess.run(
            [str(binary), "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{binary} --version: {error}"
    return done.stdout + done.stderr
