"""The real GitHub Copilot CLI the copilot end-to-end tests drive, pinned, installed once by npm_cli.py.

npm's `copilot` is a small loader that runs the platform package's native binary, which unpacks its JavaScript
bundle into `$COPILOT_CACHE_HOME/pkg/` (235 MB, ~5 s) on its first run. The tests share one such folder beside
the install (`copilot_cache_home()`), unpacked once under a lock, so that a test's private HOME does not unpack
it again.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path
from typing import Final

from tests.e2e.npm_cli import PinnedCli

__all__ = ["COPILOT_VERSION", "copilot_cache_home", "copilot_executable"]

COPILOT_VERSION: Final = "1.0.102"
COPILOT: Final = PinnedCli(
    label="GitHub Copilot",
    package="@github/copilot",
    version=COPILOT_VERSION,
    binary="copilot",
    folder="copilot",
    version_ok=lambda printed: f"GitHub Copilot CLI {COPILOT_VERSION}." in printed,
)


def copilot_executable() -> str:
    """The pinned `copilot`, installed and its bundle unpacked into copilot_cache_home()."""
    binary = COPILOT.executable()
    cache = copilot_cache_home()
    if not any(cache.glob(f"pkg/*/{COPILOT_VERSION}/.extraction-complete")):  # pkg/<platform>/<version>
        cache.mkdir(parents=True, exist_ok=True)
        with open(cache.parent / ".copilot-cache.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            env = {**os.environ, "COPILOT_CACHE_HOME": str(cache)}
            subprocess.run(
                [binary, "help", "providers"],
                env=env,
                capture_output=True,
                timeout=300,
                check=True,
                stdin=subprocess.DEVNULL,
            )
    return binary


def copilot_cache_home() -> Path:
    """The COPILOT_CACHE_HOME every test run shares: where the binary keeps its unpacked bundle."""
    return COPILOT.cache_dir() / "copilot-cache"
