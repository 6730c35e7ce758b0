"""Two versions of ralph measured in one run: a baseline git ref and the working tree.

The baseline is checked out with `git worktree add --detach` into a temporary folder and run with
`PYTHONPATH=<that checkout>/src`, with the same interpreter and dependencies as the working tree. Both
are byte-compiled first, as an installed package would be, so neither pays for compiling its imports.

Each script takes `--baseline REF` (default: main before issue 19) and `--only-current`.
"""

from __future__ import annotations

import argparse
import atexit
import compileall
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

# main as it was before issue 19's work began: the numbers in the issue were measured on it.
DEFAULT_BASELINE = "6ff28ef"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True, slots=True)
class Version:
    """One ralph to measure: a label for the tables and the `src` folder it runs from."""

    label: str
    src: str

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """`base` with this version's sources first on the import path."""
        return {**base, "PYTHONPATH": self.src}

    def ralph(self) -> list[str]:
        """The command that starts this version's `ralph`, as the installed console script does."""
        # ralphloop.cli.launch since issue 32, ralphloop.launch since issue 20, cli.main's entry before (a baseline
        # may be any of them)
        start = (
            "try:\n from ralphloop.cli.launch import entry\nexcept ImportError:\n try:\n"
            "  from ralphloop.launch import entry\n except ImportError:\n"
        )
        return [sys.executable, "-c", start + "  from ralphloop.cli.main import entry\nentry()"]


def arguments(description: str | None) -> argparse.ArgumentParser:
    """The options every side-by-side script shares; add your own before parse_args()."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--baseline", default=DEFAULT_BASELINE, help=f"git ref to compare with (default {DEFAULT_BASELINE})"
    )
    parser.add_argument("--only-current", action="store_true", help="measure the working tree alone")
    return parser


def versions(baseline: str, only_current: bool) -> list[Version]:
    """The baseline (unless only_current) and the working tree, both byte-compiled."""
    found = [Version("working tree", os.path.join(REPO, "src"))]
    if not only_current:
        found.insert(0, Version(f"baseline {baseline}", checkout(baseline)))
    for version in found:
        compileall.compile_dir(version.src, quiet=1)
        where = subprocess.run(
            [sys.executable, "-c", "import ralphloop; print(ralphloop.__file__)"],
            env=version.env(quiet_env(dict(os.environ))),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not where.startswith(version.src + os.sep):
            sys.exit(f"bench: {version.label} imports ralphloop from {where}, not from {version.src}")
    return found


def checkout(ref: str) -> str:
    """A detached worktree of `ref` in a temporary folder (removed at exit); returns its src folder."""
    folder = tempfile.mkdtemp(prefix="ralph-bench-baseline-")
    target = os.path.join(folder, "tree")
    done = subprocess.run(
        ["git", "worktree", "add", "-q", "--detach", target, ref], cwd=REPO, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"bench: cannot check out {ref}: {done.stderr.strip()}")
    atexit.register(_remove, target, folder)
    return os.path.join(target, "src")


def _remove(target: str, folder: str) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", target], cwd=REPO, capture_output=True, check=False)
    shutil.rmtree(folder, ignore_errors=True)


def quiet_env(env: dict[str, str]) -> dict[str, str]:
    """`env` without the switch that stops Python from using its byte-code cache."""
    return {key: value for key, value in env.items() if key != "PYTHONDONTWRITEBYTECODE"}


def table(title: str, rows: list[tuple[str, list[str]]], target: str) -> None:
    """Print one measurement: a line per version (or reference), then the target."""
    print(title)
    width = max([24, *(len(label) for label, _ in rows)])
    for label, cells in rows:
        print(f"  {label:<{width}} " + "  ".join(cells))
    print(f"  target: {target}")
