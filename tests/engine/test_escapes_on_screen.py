"""No escape sequence the agent writes into ralph's records reaches a screen (issue 20, item 7), in-process: a run
built as `ralph run` builds it (harness.py) leaves every record file, the agent writes escapes into them, and
`ralph status` (its "Last:" line first), `status --json`, the monitor on a pipe, `ralph report`, `ralph validate` and
`ralph logs`, run in this process, print their text with every escape and control character gone. A real run's
screen and the commands started cold are tests/integration/test_escapes_on_screen.py's.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ralphloop.cli.main import main
from tests.engine.harness import Said, Turn, Turns, ralph, run
from tests.integration.test_escapes_on_screen import HOSTILE, assert_clean


def _poison(value: Any) -> Any:
    """Every string of a JSON value with the hostile sequences around it (keys stay: the shape holds)."""
    if isinstance(value, str):
        return f"{HOSTILE}{value}{HOSTILE}"
    if isinstance(value, list):
        return [_poison(item) for item in value]
    if isinstance(value, dict):
        return {key: _poison(item) for key, item in value.items()}
    return value


def poison_file(path: Path) -> None:
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        path.write_text("".join(json.dumps(_poison(row), ensure_ascii=False) + "\n" for row in rows))
    else:
        path.write_text(json.dumps(_poison(json.loads(path.read_text())), ensure_ascii=False, indent=2))


def on_a_pipe(*args: str) -> Said:
    """`ralph ARGS` in this process, its stdout a text stream over bytes as a pipe's is (`ralph logs` copies the
    log's bytes to its buffer): harness.py's `ralph` for the commands that write bytes."""
    piped, err = io.BytesIO(), io.StringIO()
    out = io.TextIOWrapper(piped, encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    out.flush()
    return Said(code, piped.getvalue().decode(), err.getvalue())


@pytest.fixture
def records(project: Path, feature: Path) -> Path:
    """`feature` after one iteration and a breaker reset: every record file there, as a first run leaves them."""
    run(project, Turns(Turn(say="hello\n")), n=1)
    assert ralph("reset-circuit", "-f", "feat").code == 0
    return feature


@pytest.mark.parametrize(
    "files",
    [
        ["state.json"],  # the "Last:" line: last_outcome's task, status and error
        ["status.json"],
        [".circuit_breaker_state"],
        ["ralph_metrics.jsonl", "events.jsonl", ".exit_signals"],
        ["state.json", "status.json", ".circuit_breaker_state", "ralph_metrics.jsonl", "events.jsonl"],
    ],
    ids=["state", "status", "breaker", "records", "all"],
)
def test_escapes_the_agent_writes_into_the_state_files_reach_no_screen(records: Path, files: list[str]) -> None:
    state = json.loads((records / "state.json").read_text())
    state["last_outcome"] = {
        "iteration": 1,
        "task_id": "S-1",
        "status": "failed",
        "exit_code": 1,
        "error": "exit code 1",
        "at": "2026-01-01T00:00:00Z",
    }
    (records / "state.json").write_text(json.dumps(state))
    for name in files:
        poison_file(records / name)

    status = ralph("status", "-f", "feat")
    assert status.code == 0, status.err
    if "state.json" in files:
        assert "Last:       iteration 1: failed (S-1) - exit code 1" in status.out, status.out
    assert_clean("ralph status", status.out, status.err)
    for args in (["status", "--json"], ["monitor"], ["report"], ["validate"], ["logs", "1"]):
        said = on_a_pipe(*args, "-f", "feat")
        assert_clean(f"ralph {' '.join(args)}", said.out, said.err)
