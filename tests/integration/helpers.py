"""Small helpers shared by the integration tests: file snapshots, progress.txt parsing, process checks."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

ENTRY_SEPARATOR = "\n---\n"
ESC = "\x1b"


def snapshot(root: Path, *, skip: tuple[str, ...] = (".git",)) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`, by relative path; `skip` names top-level entries."""
    found: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".":
            dirs[:] = [name for name in dirs if name not in skip]
        kept = [name for name in files if rel_folder != "." or name not in skip]
        for name in dirs:
            found[os.path.normpath(os.path.join(rel_folder, name)) + "/"] = None
        for name in kept:
            path = os.path.join(folder, name)
            found[os.path.normpath(os.path.join(rel_folder, name))] = Path(path).read_bytes()
    return found


def progress_entries(text: str) -> list[str]:
    """The iteration entries of a progress.txt (everything after the header), in order."""
    return [chunk.strip("\n") for chunk in text.split(ENTRY_SEPARATOR)[1:]]


def entry_fields(entry: str) -> dict[str, str]:
    """`Key: value` lines of one entry (the first line of each key wins); notes are joined."""
    fields: dict[str, str] = {}
    notes: list[str] = []
    for line in entry.splitlines():
        match = re.match(r"^([A-Z][A-Za-z ]*):\s?(.*)$", line)
        if not match:
            continue
        key, value = match.groups()
        if key == "Note":
            notes.append(value)
        fields.setdefault(key, value)
    fields["Note"] = "\n".join(notes)
    return fields


def entry_files(entry: str) -> list[str]:
    """The paths listed under `Files Changed:` in one entry."""
    lines = entry.splitlines()
    files: list[str] = []
    for index, line in enumerate(lines):
        if line.startswith("Files Changed:"):
            for item in lines[index + 1 :]:
                if not item.startswith("  - "):
                    break
                files.append(item[4:])
    return files


def pid_alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped counts as dead)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until(predicate: Callable[[], bool], *, limit: float = 30.0, step: float = 0.02) -> bool:
    """Poll `predicate` until it holds or `limit` seconds pass; returns its last value (no timing claims)."""
    deadline = time.monotonic() + limit
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)


def wait_dead(pid: int, *, limit: float = 10.0) -> bool:
    """True once `pid` is gone (or a zombie); False if it is still alive after `limit` seconds."""
    return wait_until(lambda: not pid_alive(pid), limit=limit)


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def assert_one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The run failed with exit 1 and exactly one stderr line (no traceback) containing every needle."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip("\n").splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def git(project: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True, text=True).stdout


def set_config(project: Path, old: str, new: str) -> None:
    """Change one line `ralph init` wrote in .ralph/config.yaml (the test fails if the line is not there)."""
    config = project / ".ralph" / "config.yaml"
    text = config.read_text()
    assert old in text, text
    config.write_text(text.replace(old, new))


def killed_journal(number: int, task_id: str, task_title: str) -> dict[str, object]:
    """The .iteration.json a run killed while its agent ran leaves (no PID, no start capture: nothing to stop)."""
    return {
        "version": 1,
        "run_id": "killed",
        "number": number,
        "task_id": task_id,
        "task_title": task_title,
        "attempt": 1,
        "log_path": "",
        "started_at": "2026-11-25T06:00:00+00:00",
        "tag": "",
        "start": None,
        "done_at_start": [],
        "state": {},
    }


def parallel_feature(project: Path, env: dict[str, str], stories: Any, **config: Any) -> Path:
    """A feature `feat` made by the real `ralph init`, its prd.json on branch ralph/feat (not checked out: the merge
    queue of `ralph run --parallel` moves it itself), `config` added to .ralph/config.yaml, all committed."""
    from tests.conftest import PYTHON, write_prd

    subprocess.run([PYTHON, "-m", "ralphloop", "init", "feat"], cwd=project, env=env, check=True, capture_output=True)
    folder = project / ".ralph" / "feat"
    write_prd(folder, stories, branchName="ralph/feat")
    if config:
        import yaml

        with (project / ".ralph" / "config.yaml").open("a", encoding="utf-8") as handle:
            handle.write("\n" + yaml.safe_dump(config, sort_keys=False))
    git(project, env, "add", "-A")
    git(project, env, "commit", "-qm", "the feature")
    return folder


def start_parallel(project: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """`ralph run --parallel ARGS` in the background, its output on a pipe."""
    from tests.conftest import PYTHON

    return subprocess.Popen(
        [PYTHON, "-m", "ralphloop", "run", "--parallel", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
