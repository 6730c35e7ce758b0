"""Which bubblewrap (bwrap) the real Codex's Linux sandbox uses in the end-to-end tests: the test decides, not the
machine, so the tests pass whether or not a bwrap is installed and whether or not it can create namespaces.

How Codex 0.169.0 picks it (seen with strace and a logging stand-in; docs/agents.md): the first `bwrap` on PATH that
is outside every folder its sandbox lets commands write (the project, /tmp, $TMPDIR: a candidate there is passed
over) and whose `bwrap --help` names `--as-pid-1` and `--perms`; else the copy in its npm package
(`vendor/<target>/codex-resources/bwrap`). So a folder first on PATH, outside those roots, holding a `bwrap` decides:
`use_bundled` puts there one that runs the packaged copy (what a machine without bwrap gets), `use_broken` one that
fails as a bwrap on a machine without user namespaces does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from tests.e2e.cli_cache import cache_dir

# What Ubuntu 24.04's bwrap prints when AppArmor refuses unprivileged user namespaces (also one of the failures
# Codex's own probe looks for). Codex takes "Permission denied" for a sandbox denial: its `--json` stream then
# has no item for the command at all, which is the case ralph must still explain (issue 31).
NAMESPACE_DENIED: Final = "bwrap: setting up uid map: Permission denied"

# The part of bubblewrap 0.8's `--help` Codex checks before it trusts a bwrap on PATH.
_HELP: Final = (
    "usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]\n"
    "    --as-pid-1                   Do not install a reaper process with PID=1\n"
    "    --perms OCTAL                Set permissions of next argument (--bind-data, --file, etc.)\n"
)


@contextmanager
def bwrap_folder(codex_version: str) -> Iterator[Path]:
    """A new empty folder for a `bwrap`, outside Codex's writable roots (so Codex may use it), removed afterwards."""
    for parent in (cache_dir("codex", codex_version).parent, Path("/var/tmp"), Path.home()):
        if _writable_root(parent) or not os.access(parent, os.W_OK | os.X_OK):
            continue
        folder = Path(tempfile.mkdtemp(prefix=".bwrap-", dir=parent))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    raise RuntimeError("no folder outside /tmp and $TMPDIR to put a bwrap for Codex in")


def bundled_bwrap(codex_version: str) -> Path | None:
    """The bubblewrap in the pinned Codex's npm package (None if the package has none for this platform)."""
    found = sorted(
        cache_dir("codex", codex_version).glob("node_modules/@openai/codex-*/vendor/*/codex-resources/bwrap")
    )
    return found[0] if found else None


def namespaces_work(bwrap: Path) -> bool:
    """Whether `bwrap` can create the namespaces Codex's sandbox needs here (the probe Codex itself runs)."""
    probe = [str(bwrap), "--unshare-user", "--unshare-net", "--ro-bind", "/", "/", "/bin/true"]
    try:
        return subprocess.run(probe, check=False, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def use_bundled(folder: Path, bundled: Path) -> None:
    """A `bwrap` in `folder` that runs the packaged one: Codex behaves as on a machine with no bwrap installed."""
    _script(folder, f'exec "{bundled}" "$@"\n')


def use_broken(folder: Path, said: str = NAMESPACE_DENIED) -> None:
    """A `bwrap` in `folder` that answers `--help` as bubblewrap 0.8 does and fails everything else with `said`, as a
    bwrap that cannot create user namespaces does."""
    help_text = _HELP.replace("'", "'\\''")
    _script(
        folder,
        f"""case "$1" in
--help) printf '%s' '{help_text}'; exit 0 ;;
--version) echo 'bubblewrap 0.8.0'; exit 0 ;;
esac
echo '{said}' >&2
exit 1
""",
    )


def with_folder_first(env: dict[str, str], folder: Path) -> dict[str, str]:
    """`env` with `folder` first on PATH."""
    return {**env, "PATH": f"{folder}{os.pathsep}{env.get('PATH', os.defpath)}"}


def _script(folder: Path, body: str) -> None:
    path = folder / "bwrap"
    path.write_text(f"#!/bin/sh\n{body}")
    path.chmod(0o755)


def _writable_root(path: Path) -> bool:
    """Whether Codex's workspace-write sandbox lets commands write under `path` (/tmp, $TMPDIR)."""
    real = path.resolve()
    roots = [Path("/tmp"), *([Path(os.environ["TMPDIR"])] if os.environ.get("TMPDIR") else [])]
    return any(real == root.resolve() or root.resolve() in real.parents for root in roots)


def sandboxed(env: dict[str, str], folder: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """The environment and ralph flags of a run whose Codex commands can run, whatever bwrap this machine has: in
    Codex's sandbox with the bwrap of its package (put first on PATH from `folder`), as on a machine without bwrap,
    when that can create namespaces here; else without Codex's sandbox (`--permissions all`)."""
    from tests.e2e.codex_cli import CODEX_VERSION

    bundled = bundled_bwrap(CODEX_VERSION)
    if bundled is not None and namespaces_work(bundled):
        use_bundled(folder, bundled)
        return with_folder_first(env, folder), ()
    return env, ("--permissions", "all")
