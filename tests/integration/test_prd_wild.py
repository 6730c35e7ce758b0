"""prd.json files real users wrote (tests/fixtures/wild/prd/), through the real `ralph`: what is refused,
`ralph validate`, `ralph run` and `ralph status` refuse in the same words (the first problem validate lists), naming
the line and the fix, and leave every file as it was; `--parallel` and the scripted agent find the stories where the
file keeps them. That `"stories"`, a top-level array, snake_case fields, priority labels and a UTF-16 file are read
and worked to the end by an agent that knows nothing but the prompt's instruction is tests/engine/test_prd_wild.py's,
in-process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import assert_one_line_error, git, snapshot

WILD = Path(__file__).resolve().parent.parent / "fixtures" / "wild" / "prd"
FOLLOWER = agent_cmd("prompt_agent.py")  # does what the prompt's instruction says, and nothing else


def put(project: Path, env: dict[str, str], sample: str | bytes) -> Path:
    """A feature `feat` holding a wild sample's prd.json (or these bytes), committed: the run starts clean."""
    folder = project / ".ralph" / "feat"
    folder.mkdir(parents=True)
    target = folder / "prd.json"
    if isinstance(sample, bytes):
        target.write_bytes(sample)
    else:
        shutil.copyfile(min((WILD / sample).rglob("prd.json"), key=lambda path: len(path.parts)), target)
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "the user's prd.json")
    return target


def stories_in(path: Path, key: str) -> list[dict[str, object]]:
    data = json.loads(path.read_bytes())
    stories: list[dict[str, object]] = data[key] if key else data
    return stories


MISSPELT = b'{\n  "userStories": [\n    {"id": "A", "title": "a", "passes": false,\n     "prority": 2}\n  ]\n}\n'
TASKS_LINE = (
    '.ralph/feat/prd.json:5: no "userStories" array (found "tasks": 12 objects with an "id"; '
    'rename it to "userStories")'
)


@pytest.mark.parametrize(
    ("sample", "first"),
    [
        ("BolivarTech__magi-core", TASKS_LINE),
        (
            "Capevace__claw.events",
            '.ralph/feat/prd.json:1: no "userStories" array: another tool\'s file? (its keys: "title", "phases", '
            '"notes"; ralph reads {"userStories": [{"id": ..., "title": ..., "passes": false}, ...]})',
        ),
        (
            MISSPELT,
            '.ralph/feat/prd.json:4: userStories[0]: "prority" is not a field ralph reads (did you mean "priority"?)',
        ),
        (b'{\n  "userStories": [\n', ".ralph/feat/prd.json:3: invalid JSON at column 1: Expecting value"),
    ],
)
def test_validate_run_and_status_refuse_in_the_same_words(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], sample: str | bytes, first: str
) -> None:
    put(project, ralph_env, sample)
    before = snapshot(project)

    checked = ralph("validate")
    ran = ralph("run", "feat", "--dry-run", "--agent-cmd", FOLLOWER)
    status = ralph("status")
    as_json = ralph("status", "--json")

    assert checked.returncode == 1 and checked.stdout.splitlines()[0] == first
    listed = len(checked.stdout.splitlines()) - 1  # the problems, then the count
    tail = f" (and {listed - 1} more problems; all of them: ralph validate -f .ralph/feat)" if listed > 1 else ""
    line = assert_one_line_error(ran)
    assert line == f"ralph: error: {first}{tail}"
    for told in (status, as_json):
        assert (told.returncode, told.stderr.strip(), told.stdout) == (1, line, "")
    everything = checked.stdout + ran.stderr + status.stderr
    assert not any(word in everything for word in ("Error:", "KeyError", "ValueError", "TypeError", "Traceback"))
    assert snapshot(project) == before


def test_a_parallel_run_reads_a_stories_file_as_a_single_run_does(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """--parallel finds the stories where the file keeps them, and marks each passing there once merged: reading
    only `userStories`, it found none in a `"stories"` file and called the feature complete."""
    assert ralph("init", "feat").returncode == 0
    body = {
        "branchName": "ralph/feat",  # not checked out: the merge queue moves it
        "stories": [{"id": f"S-{n}", "title": f"story {n}", "priority": f"P{n}", "passes": False} for n in (1, 2)],
    }
    (project / ".ralph" / "feat" / "prd.json").write_text(json.dumps(body, indent=2))
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "the feature")

    done = ralph("run", "--parallel", "2", "--agent-cmd", FOLLOWER, timeout=300)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 2 stories merged into ralph/feat." in done.stdout
    merged = json.loads(git(project, ralph_env, "show", "ralph/feat:.ralph/feat/prd.json"))
    assert [(story["id"], story["passes"]) for story in merged["stories"]] == [("S-1", True), ("S-2", True)]
    assert "userStories" not in merged


def test_the_scripted_agent_marks_a_story_where_the_file_keeps_it(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    prd = put(project, ralph_env, "CCExtractor__ccextractor")  # a top-level array
    script = 'iterations:\n  - pass: [DVB-004]\n    commit: "feat: DVB-004"\n'
    (project / ".ralph" / "feat" / "script.yaml").write_text(script)

    done = ralph("run", "feat", "-n", "1", "--agent", "scripted")

    assert done.returncode == 1, done.stdout + done.stderr  # its one iteration spent, four stories left
    assert [story["id"] for story in stories_in(prd, "") if story["passes"] is True][-1] == "DVB-004"
    assert "Stories:    4 / 8 pass" in ralph("status").stdout
