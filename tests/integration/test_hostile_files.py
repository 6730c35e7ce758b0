"""Hostile files in place of every task, config and runtime file ralph reads, through every command that
reads it (issue 20, item 8): each command finishes (a subprocess timeout, never a sleep), refuses with one
line naming the file or tolerates it, never shows a traceback, and leaves every file as it was.

A FIFO, a link to /dev/zero, a folder or a dangling link is refused by every command that reads the file
(the monitor tolerates an iteration log it only tails); a 1 GB sparse file is refused where ralph reads a
file whole and tolerated where it reads only the tail; invalid UTF-8, NUL characters and lone surrogates
(JSON-valid, YAML-valid where the format allows) are refused with one line or read as documented.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ralphloop.state.fleet import FLEET, LOOP
from tests.integration.helpers import killed_journal
from tests.integration.hostile_project import SAY, copy_case, env_of, shared_template, tree
from tests.warm_ralph import WarmRalph

TIMEOUT = 15  # a command that has not finished by then hangs

RUN, STATUS, VALIDATE, REPORT, MONITOR, ANALYZE = "run", "status", "validate", "report", "monitor", "analyze"
SIGNAL = "signal"
WRITERS = (SIGNAL, RUN)  # in this order, after the views: each may change files when it goes ahead
ALL_VIEWS = (STATUS, REPORT, MONITOR)


class Target:
    """One file ralph reads: where it is, its feature, how it is written, which commands read it."""

    def __init__(
        self,
        path: str,
        feature: str,
        syntax: str,
        readers: tuple[str, ...],
        *,
        tail: bool = False,
        tolerated: tuple[str, ...] = (),
        seed: bytes = b"",
    ) -> None:
        self.path = path  # relative to the case's folder (project/..., home/..., run.log)
        self.feature = feature
        self.syntax = syntax  # json, jsonl, yaml or text: how the content kinds are made
        self.readers = readers
        self.tail = tail  # read from its end only: a huge file is fine
        self.tolerated = tolerated  # readers that may ignore a file that is not a file (documented)
        self.seed = seed  # the file's content before it is made hostile, when the template has none


def _feature(name: str, file: str) -> str:
    return f"project/.ralph/{name}/{file}"


JOURNAL = json.dumps(killed_journal(1, "US-001", "First story")).encode()
# a parallel run's summary (state/fleet.py): `ralph status` and the monitor show it, or say in a line why not
FLEET_SEED = json.dumps(
    FLEET.dump({"feature": "feat", "loops": [LOOP.dump({"story": "US-001", "state": "running"})], "queue": ["US-002"]})
).encode()

TARGETS: dict[str, Target] = {
    "prd.json": Target(
        _feature("feat", "prd.json"), "feat", "json", (RUN, STATUS, VALIDATE, MONITOR), tolerated=(MONITOR,)
    ),
    "progress.txt": Target(_feature("feat", "progress.txt"), "feat", "text", (RUN,)),
    "prompt.md": Target(_feature("feat", "prompt.md"), "feat", "text", (RUN, VALIDATE)),
    "status.json": Target(_feature("feat", "status.json"), "feat", "json", (RUN, STATUS, MONITOR)),
    "state.json": Target(_feature("feat", "state.json"), "feat", "json", (RUN, STATUS, MONITOR)),
    "breaker": Target(_feature("feat", ".circuit_breaker_state"), "feat", "json", (RUN, STATUS, VALIDATE, MONITOR)),
    "breaker-history": Target(_feature("feat", ".circuit_breaker_history"), "feat", "json", (RUN,)),
    "metrics": Target(_feature("feat", "ralph_metrics.jsonl"), "feat", "jsonl", (RUN, REPORT)),
    # `ralph report` reads only the waits there: without them it goes on, with a warning naming the file
    "events": Target(
        _feature("feat", "events.jsonl"), "feat", "jsonl", (RUN, MONITOR, REPORT), tail=True, tolerated=(REPORT,)
    ),
    "signals": Target(_feature("feat", "signals.jsonl"), "feat", "jsonl", (RUN, ANALYZE, SIGNAL), tail=True),
    "exit-signals": Target(_feature("feat", ".exit_signals"), "feat", "json", (RUN, MONITOR)),
    "response-analysis": Target(_feature("feat", ".response_analysis"), "feat", "json", (RUN,)),
    "lock": Target(_feature("feat", ".lock"), "feat", "text", (RUN, STATUS, MONITOR), tail=True),
    "iteration-log": Target(
        _feature("feat", "logs/iteration-1.log"), "feat", "text", (ANALYZE, MONITOR), tolerated=(MONITOR,)
    ),
    # only a killed run leaves a journal, and only a run with hooks their logs: seeded per case
    "journal": Target(_feature("feat", ".iteration.json"), "feat", "json", (RUN,), seed=JOURNAL),
    "hook-log": Target(
        _feature("feat", "logs/hooks/post_iteration-1.log"), "feat", "text", (RUN,), tail=True, seed=b"hook said\n"
    ),
    "iteration-prompt": Target(_feature("feat", "logs/iteration-1.prompt.md"), "feat", "text", (ANALYZE,)),
    "config": Target("project/.ralph/config.yaml", "feat", "yaml", (RUN, VALIDATE)),
    "gitignore": Target("project/.ralph/.gitignore", "feat", "text", (RUN,)),
    "user-config": Target("home/config.yaml", "feat", "yaml", (RUN, VALIDATE)),
    "call-ledger": Target("home/calls/command.json", "feat", "json", (RUN,)),
    "log-file": Target("run.log", "feat", "text", (RUN,), tail=True),
    "TODO.md": Target(_feature("todo", "TODO.md"), "todo", "text", (RUN, VALIDATE)),
    "fix_plan.md": Target(_feature("fix", "fix_plan.md"), "fix", "text", (RUN, VALIDATE)),
    "PROMPT.md": Target(_feature("fix", "PROMPT.md"), "fix", "text", (RUN, VALIDATE)),
    "story-spec": Target(
        _feature("stories", "specs/epic-1/story-1.1-first-story.md"), "stories", "text", (RUN, VALIDATE)
    ),
    "SPRINT.yaml": Target(_feature("goal", "SPRINT.yaml"), "goal", "yaml", (RUN, VALIDATE)),
    "PROGRESS.yaml": Target(_feature("goal", "PROGRESS.yaml"), "goal", "yaml", (RUN, VALIDATE)),
    "fleet.json": Target(
        _feature("feat", "fleet.json"), "feat", "json", (STATUS, MONITOR), tolerated=(STATUS, MONITOR), seed=FLEET_SEED
    ),
    "goal-status.json": Target(_feature("goal", "status.json"), "goal", "json", (RUN, STATUS, MONITOR)),
}

NOT_A_FILE = ("fifo", "dev-zero", "folder", "dangling-link")
CONTENT = ("invalid-utf8", "nul", "lone-surrogates")
KINDS = (*NOT_A_FILE, "sparse-1gb", *CONTENT)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = shared_template(tmp_path_factory)
    for target in TARGETS.values():
        assert target.seed or (base / target.path).is_file(), target.path
    return base


@pytest.fixture(scope="module")
def warm(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WarmRalph]:
    """The real CLI, forked from an interpreter that has imported it (200 cases x 4 commands: no time
    for 800 cold starts)."""
    runner = WarmRalph(env_of(template), tmp_path_factory.mktemp("outputs"))
    try:
        yield runner
    finally:
        runner.close()


# ---------------------------------------------------------------- the hostile kinds


def _strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {key: _strings(item, change) for key, item in value.items()}
    return value


def _json_strings(data: bytes, change: Callable[[str], str], lines: bool) -> bytes:
    if lines:
        rows = [_json_strings(row, change, False) for row in data.splitlines() if row.strip()]
        return b"\n".join(rows) + b"\n"
    return json.dumps(_strings(json.loads(data), change)).encode()  # ensure_ascii: "\u0000", "\ud800"


def _yaml_strings(data: bytes, change: Callable[[str], str]) -> bytes:
    import yaml

    return yaml.safe_dump(_strings(yaml.safe_load(data), change), allow_unicode=False).encode()


def _content(target: Target, data: bytes, kind: str) -> bytes:
    if kind == "invalid-utf8":
        at = data.find(b'"') + 1 if target.syntax.startswith("json") else data.find(b"\n") % (len(data) + 1)
        return data[:at] + b"\xff\xfe\xc3(" + data[at:]
    change = {"nul": lambda text: text + "\x00x", "lone-surrogates": lambda text: text + "\ud800x\udfff"}[kind]
    if target.syntax.startswith("json") and data.strip():
        return _json_strings(data, change, target.syntax == "jsonl")
    if target.syntax == "yaml":
        return _yaml_strings(data, change)
    raw = {"nul": b"\x00", "lone-surrogates": b"\xed\xa0\x80"}[kind]  # a surrogate, as UTF-8 would encode it
    at = data.find(b"\n") % (len(data) + 1)
    return data[:at] + raw + data[at:] + raw + b"\n"


def _make(path: Path, target: Target, kind: str) -> None:
    data = target.seed or path.read_bytes()
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
        (path / "inside").write_text("x\n")
    elif kind == "dangling-link":
        path.symlink_to(path.parent / "missing-target")
    elif kind == "sparse-1gb":
        path.write_bytes(data)
        with open(path, "r+b") as handle:
            handle.truncate(1 << 30)
    else:
        path.write_bytes(_content(target, data, kind))


# ---------------------------------------------------------------- the commands and what each must do


def _args(command: str, target: Target, base: Path) -> list[str]:
    feature = ["-f", target.feature]
    if command == RUN:
        extra = ["--log-file", str(base / "run.log")] if target.path == "run.log" else []
        return [RUN, *feature, "-n", "1", "--agent-cmd", SAY, *extra]
    if command == ANALYZE:
        return [ANALYZE, ".ralph/feat/logs/iteration-1.log"]
    if command == SIGNAL:
        return [SIGNAL, "learn", "a lesson", *feature]
    return [command, *feature]


def _names(target: Target) -> tuple[str, ...]:
    """How an error may name the file: its name, or its folder's for a story spec read as a set."""
    name = os.path.basename(target.path)
    return (name, "specs/") if "specs/" in target.path else (name,)


def _check(command: str, target: Target, kind: str, done: subprocess.CompletedProcess[str]) -> str:
    """'refused' or 'accepted', after checking the command's output is one of the two allowed shapes."""
    shown = f"ralph {command} on {target.path} as {kind}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stdout + done.stderr, shown
    assert "internal error" not in done.stdout + done.stderr, shown
    if command == RUN and "Summary:" in done.stdout:
        assert done.returncode in (0, 1), shown  # the run went ahead and ended normally
        return "accepted"
    if command == VALIDATE:
        if done.returncode == 0:
            return "accepted"
        assert done.returncode == 1, shown
        assert any(name in done.stdout + done.stderr for name in _names(target)), shown
        return "refused"
    if done.returncode == 0:
        return "accepted"
    assert done.returncode == 1, shown
    lines = done.stderr.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("ralph: error: "), shown
    assert any(name in lines[0] for name in _names(target)), shown
    return "refused"


def _must_refuse(command: str, target: Target, kind: str) -> bool:
    if command in target.tolerated:
        return False
    if kind in NOT_A_FILE:
        return True
    return kind == "sparse-1gb" and not target.tail


CASES = [pytest.param(name, kind, id=f"{name}-{kind}") for name in TARGETS for kind in KINDS]


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_every_command_finishes_and_names_the_file(
    template: Path, warm: WarmRalph, tmp_path: Path, name: str, kind: str
) -> None:
    target = TARGETS[name]
    base = copy_case(template, tmp_path)
    _make(base / target.path, target, kind)
    before = tree(base)
    # the views first (they write nothing), then the writers
    for command in sorted(target.readers, key=lambda command: WRITERS.index(command) if command in WRITERS else -1):
        try:
            done = warm(base / "project", env_of(base), *_args(command, target, base), timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"ralph {command} hangs on {target.path} as {kind}")
        verdict = _check(command, target, kind, done)
        if _must_refuse(command, target, kind):
            assert verdict == "refused", f"ralph {command} accepted {target.path} as {kind}:\n{done.stdout}"
        if verdict == "refused" or command not in WRITERS:
            assert tree(base) == before, f"ralph {command} changed files ({target.path} as {kind})"
        before = tree(base)
