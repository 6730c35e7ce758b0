"""What npm_cli.py and pypi_cli.py share about a pinned CLI's install: its folder in the cache every test run
shares (`$RALPH_TEST_CACHE/<folder>-<version>`, default parent `~/.cache/ralphloop-tests`), installing it once
under an exclusive file lock, its `--version` output, and moving a checked install into place, so that a
concurrent or interrupted run never sees a half-finished one. What a checked install printed for `--version` is
kept beside it (`checked_version_output`): every test worker asked each CLI again, seconds of node each time."""

from __future__ import annotations

import contextlib
import fcntl
import json
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


def checked_version_output(prefix: Path, binary: Path, timeout: float) -> str:
    """`version_output` of an install's binary, kept in `prefix/.version-output` with the binary's identity (its
    resolved path, inode, size and mtime): asked again only when the binary is not the one that printed it."""
    try:
        info = binary.resolve().stat()
    except OSError:
        return version_output(binary, timeout)
    identity = [str(binary.resolve()), info.st_ino, info.st_size, info.st_mtime_ns]
    stamp = prefix / ".version-output"
    try:
        kept = json.loads(stamp.read_text(encoding="utf-8"))
        if kept["identity"] == identity:
            return str(kept["output"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    output = version_output(binary, timeout)
    with contextlib.suppress(OSError):  # a cache it may not write to is asked each time, as before
        fd, scratch = tempfile.mkstemp(prefix=".version-output.", dir=prefix)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"identity": identity, "output": output}, handle)
        os.replace(scratch, stamp)  # whole or absent: a worker reading it meanwhile sees the old one or none
    return output
