"""No escape sequence from a file or an agent reaches the terminal (issue 20, item 7): `ralph status` (every
line, its "Last:" line first), `status --json`, the monitor on a pipe, `ralph report`, `ralph validate`,
`ralph analyze` and `ralph logs` print the text of files the agent can write with every escape and control character
gone: an OSC 52 clipboard write, a window title, a clear screen, their 8-bit forms.

Here, real processes: a real `ralph run` whose agent prints escapes, then every command started cold, and a task
file's escapes through every command down to the refused run's error line. The records' escapes (state.json's
"Last:" line, status.json, the breaker's, the logs) are tests/engine/test_escapes_on_screen.py's, in-process."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import agent_cmd
from tests.integration.hostile_project import cold_ralph, copy_case, shared_template

CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: "rm -rf ~" put in the clipboard
TITLE = "\x1b]0;pwned title\x07"
CLEAR = "\x1b[2J\x1b[H"
EIGHT_BIT = "\x9b2J\x9d0;title\x9c"  # CSI and OSC as single C1 characters
HOSTILE = CLIPBOARD + TITLE + CLEAR + EIGHT_BIT
# what must never be printed: ESC, BEL, the other C0 controls but tab and newline, DEL and the C1 controls
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _assert_clean(done: subprocess.CompletedProcess[str], what: str) -> None:
    assert_clean(what, done.stdout, done.stderr)


def assert_clean(what: str, stdout: str, stderr: str) -> None:
    """`what` printed no control character, on either stream, and did not crash."""
    assert "Traceback" not in stderr and "internal error" not in stderr, (what, stderr)
    for stream, text in (("stdout", stdout), ("stderr", stderr)):
        found = _CONTROL.search(text)
        assert found is None, f"{what} wrote {found.group()!r} to {stream}:\n{text!r}"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_template(tmp_path_factory)


def test_an_agent_that_prints_escapes_leaves_none_on_any_screen(template: Path, tmp_path: Path) -> None:
    base = copy_case(template, tmp_path)
    loud = agent_cmd("say.py", f"{HOSTILE}working{HOSTILE}\n<ralph>FAIL S-1: {HOSTILE}broken</ralph>", "--exit", "1")

    run = cold_ralph(base, "run", "-f", "feat", "-n", "1", "--agent-cmd", loud)
    _assert_clean(run, "ralph run")
    state = json.loads((base / "project" / ".ralph" / "feat" / "state.json").read_text())
    assert state["last_outcome"] is not None  # the "Last:" line has something to show
    for args in (["status"], ["status", "--json"], ["monitor"], ["report"], ["logs", "2"]):
        _assert_clean(cold_ralph(base, *args, "-f", "feat"), f"ralph {' '.join(args)}")
    _assert_clean(cold_ralph(base, "analyze", ".ralph/feat/logs/iteration-2.log"), "ralph analyze")


def test_escapes_in_the_task_file_reach_no_screen(template: Path, tmp_path: Path) -> None:
    base = copy_case(template, tmp_path)
    prd_path = base / "project" / ".ralph" / "feat" / "prd.json"
    prd = json.loads(prd_path.read_text())
    for story in prd["userStories"]:
        story["title"] = f"{HOSTILE}{story['title']}"
    prd["userStories"][1]["id"] = prd["userStories"][0]["id"] = f"S-1{HOSTILE}"  # twice: validate quotes it
    prd_path.write_text(json.dumps(prd))

    for args in (["status"], ["validate"], ["monitor"]):
        _assert_clean(cold_ralph(base, *args, "-f", "feat"), f"ralph {' '.join(args)}")
    refused = cold_ralph(base, "run", "-f", "feat", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi"))
    assert refused.returncode == 1 and "used twice" in refused.stderr, refused.stderr
    _assert_clean(refused, "ralph run")
