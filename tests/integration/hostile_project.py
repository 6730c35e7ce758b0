"""The project the hostile-input tests copy for each case: one workspace of each task format, each run
once so that every runtime file exists; and what "every file as it was" means when some are FIFOs."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PYTHON, agent_cmd, isolated_env, write_prd

SAY = agent_cmd("say.py", "hello")
FEATURES = {"feat": "prd", "todo": "todo", "fix": "fix-plan", "stories": "stories", "goal": "goal"}


def env_of(base: Path) -> dict[str, str]:
    """The environment of a case: its own RALPH_HOME and git identity, no colour."""
    return isolated_env(base / "home", base / "gitconfig")


def cold_ralph(base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m ralphloop ARGS` in the case's project, started as a user starts it."""
    return subprocess.run(
        [PYTHON, "-m", "ralphloop", *args],
        cwd=base / "project",
        env=env_of(base),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _git(base: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=base / "project", env=env_of(base), check=True, capture_output=True)


def shared_template(factory: pytest.TempPathFactory) -> Path:
    """The template, made once for the whole test run: every worker's cases, in every module, are copies of it
    (made anew in each worker it cost seconds of a dozen cold `ralph` runs each time). Never written once made."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's own folder, which its workers' folders are in
    base, made = root / "hostile-template", root / "hostile-template.made"
    with open(root / "hostile-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker makes it; the others wait for it
        if not made.exists():
            shutil.rmtree(base, ignore_errors=True)
            base.mkdir()
            make_template(base)
            made.touch()
    return base


def make_template(base: Path) -> Path:
    """A project with one workspace of each format (`feat` is prd.json's), each run once, a `ralph signal`
    and a breaker reset recorded, a user config and a --log-file; everything committed."""
    (base / "project").mkdir()
    (base / "home").mkdir()
    (base / "home" / "config.yaml").write_text("defaults:\n  rate_limit_per_hour: 100\n")
    _git(base, "init", "-q", "-b", "main", "--template=")  # no sample hooks: each case copies what is here
    _git(base, "commit", "-q", "--allow-empty", "-m", "initial")
    for name, kind in FEATURES.items():
        assert cold_ralph(base, "init", name, "--format", kind).returncode == 0
    write_prd(base / "project" / ".ralph" / "feat", 3)
    _real_tasks(base / "project" / ".ralph")
    _git(base, "add", "-A")
    _git(base, "commit", "-q", "-m", "features")
    # feat's agent records a `ralph signal` (a loop must be running for one to be taken)
    (base / "plan.json").write_text(json.dumps({"*": {"signals": [["learn", "a lesson"]], "say": "hello\n"}}))
    for name in FEATURES:
        agent = agent_cmd("plan_agent.py", str(base / "plan.json")) if name == "feat" else SAY
        done = cold_ralph(base, "run", "-f", name, "-n", "1", "--agent-cmd", agent, "--log-file", str(base / "run.log"))
        assert done.returncode == 1 and "Summary:" in done.stdout, done.stdout + done.stderr
    assert (base / "project" / ".ralph" / "feat" / "signals.jsonl").is_file()
    assert cold_ralph(base, "reset-circuit", "-f", "feat").returncode == 0
    _git(base, "add", "-A")
    _git(base, "commit", "-q", "-m", "after the first runs")
    _git(base, "gc", "-q", "--prune=now")  # a few packed files, not a hundred loose ones, for each case to copy
    return base


def _real_tasks(folder: Path) -> None:
    """The tasks `ralph init` wrote, made real: a run refuses the examples as they are."""
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in (".md", ".json", ".yaml"):
            text = path.read_text()
            for example in ("Replace this example", "Replace this one too", "Replace or delete this one", "Describe"):
                text = text.replace(example, "Do this real work")
            path.write_text(text)


def copy_case(template: Path, into: Path) -> Path:
    """A copy of the template for one case (status.json and state.json name files by absolute path:
    they name the copy's)."""
    base = into / "case"
    shutil.copytree(template, base, symlinks=True)
    old, new = str(template).encode(), str(base).encode()
    for folder, _, files in os.walk(base / "project" / ".ralph"):
        for name in files:
            path = Path(folder) / name
            data = path.read_bytes()
            if old in data:
                path.write_bytes(data.replace(old, new))
    return base


def tree(base: Path) -> dict[str, object]:
    """Every entry under `base` (git's own folder aside): its kind and, for a regular file, its bytes
    (a huge sparse file by size and mtime); never opens anything but a small regular file."""
    found: dict[str, object] = {}
    for folder, dirs, files in os.walk(base):
        dirs[:] = [name for name in dirs if name != ".git"]
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, base)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                small = info.st_size < 1 << 20
                found[rel] = Path(path).read_bytes() if small else ("big", info.st_size, info.st_mtime_ns)
            else:
                found[rel] = ("special", stat.S_IFMT(info.st_mode))
    return found
