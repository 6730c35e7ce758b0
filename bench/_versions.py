"""Two versions of ralph measured in one run: a baseline git ref and the working tree.

The baseline is checked out with `git worktree add --detach` into a temporary folder and run with
`PYTHONPATH=<that checkout>/src`, with the same interpreter and dependencies as the working tree. Both
are byte-compiled first, as an installed package would be, so neither pays for compiling its imports.

That interpreter is, as users have it, one with ralph's runtime dependencies alone (`pipx install ralphloop`):
a virtual environment made once (in the temporary folder, reused) with the versions the project's own
environment pins. The project's environment also holds the test and type-checking tools, whose packages
ralph's dependencies pick up when present (msgspec imports typing_extensions: ~5-10 ms of each start that no
user pays). `--dev-venv` measures with the project's own interpreter instead.

Each script takes `--baseline REF` (default: main before issue 19) and `--only-current`.
"""

from __future__ import annotations

import argparse
import atexit
import compileall
import importlib.metadata
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
    python: str = sys.executable

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
        return [self.python, "-c", start + "  from ralphloop.cli.main import entry\nentry()"]


def arguments(description: str | None) -> argparse.ArgumentParser:
    """The options every side-by-side script shares; add your own before parse_args()."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--baseline", default=DEFAULT_BASELINE, help=f"git ref to compare with (default {DEFAULT_BASELINE})"
    )
    parser.add_argument("--only-current", action="store_true", help="measure the working tree alone")
    parser.add_argument(
        "--dev-venv", action="store_true", help="run ralph with the project's own environment, not a user's"
    )
    return parser


def versions(baseline: str, only_current: bool, dev_venv: bool = False) -> list[Version]:
    """The baseline (unless only_current) and the working tree, both byte-compiled, run by a user's interpreter
    (the project's own with `dev_venv`)."""
    python = sys.executable if dev_venv else user_python()
    found = [Version("working tree", os.path.join(REPO, "src"), python)]
    if not only_current:
        found.insert(0, Version(f"baseline {baseline}", checkout(baseline), python))
    for version in found:
        compileall.compile_dir(version.src, quiet=1)
        where = subprocess.run(
            [version.python, "-c", "import ralphloop; print(ralphloop.__file__)"],
            env=version.env(quiet_env(dict(os.environ))),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not where.startswith(version.src + os.sep):
            sys.exit(f"bench: {version.label} imports ralphloop from {where}, not from {version.src}")
    return found


# ralph's runtime dependencies and theirs, at the versions the project's environment has
RUNTIME = ("msgspec", "PyYAML", "psutil", "rich", "markdown-it-py", "mdurl", "pygments")


def user_python() -> str:
    """An interpreter with ralph's runtime dependencies alone, made once and reused while the pins hold."""
    pins = sorted(f"{name}=={importlib.metadata.version(name)}" for name in RUNTIME)
    folder = os.path.join(os.path.expanduser("~"), ".cache", "ralph-bench", "user-venv")  # the user's own: no one
    python = os.path.join(folder, "bin", "python")  # else can put an interpreter there for the bench to run
    ready = os.path.join(folder, "pins.txt")
    if os.path.exists(ready):
        with open(ready, encoding="utf-8") as handle:
            if handle.read() == "\n".join(pins):
                return python
    shutil.rmtree(folder, ignore_errors=True)
    print("bench: making a user's environment (ralph's runtime dependencies alone) ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", folder], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", *pins], check=True)
    with open(ready, "w", encoding="utf-8") as handle:
        handle.write("\n".join(pins))
    return python


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
