"""prd.json files real users wrote (tests/fixtures/wild/prd/), in-process: runs built as `ralph run feat` builds them,
their agent played back (harness.py) doing what the prompt's instruction says and nothing else, real git and the
real file. `"stories"`, a top-level array, snake_case fields, priority labels and a UTF-16 file are read and worked to
the end. What is refused, in the same words by `ralph validate`, `ralph run` and `ralph status`, and the --parallel
and scripted runs, are tests/integration/test_prd_wild.py's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.runner import Launch
from ralphloop.processes.replay import Recording
from tests.conftest import read_json
from tests.engine.harness import Turn, Turns, git_out, ralph, run
from tests.engine.harness_backends import dry_run
from tests.integration.test_prd_wild import put, stories_in

# ralph's words (tasks/prd_json.py PrdSource.describe), as tests/agents/prompt_agent.py reads them
MARK = re.compile(
    r'set `"passes": true` for (\S+) in (\S+?)(?: \(its "([^"]+)" array\)| \((the array it holds)\))?\.$', re.MULTILINE
)


@dataclass(frozen=True)
class Follower:
    """tests/agents/prompt_agent.py: marks the story the prompt names passing, in the file and the array the prompt
    names, writes work-ID.txt and commits; it knows nothing of prd.json but what the prompt says."""

    def recording(self, launch: Launch) -> Recording:
        said = MARK.search(launch.command.stdin.decode())
        if said is None:
            return Recording(b"", b"the prompt names no story to mark\n", 1)
        story_id, path, key, whole = said.groups()
        data = json.loads((Path(launch.cwd) / path).read_bytes())  # UTF-8, or UTF-16/32 with its byte-order mark
        for story in data if whole else data[key or "userStories"]:
            if story["id"] == story_id:
                story["passes"] = True
        marked = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        turn = Turn(
            write={path: marked, f"work-{story_id}.txt": f"done {story_id}\n"},
            commit=f"feat: {story_id}",
            say=f"finished {story_id}\n",
        )
        return turn.recording(launch)


def follower() -> Turns:
    return Turns(then=Follower())


def status_json() -> dict[str, Any]:
    shown = ralph("status", "--json")
    data: dict[str, Any] = json.loads(shown.out)
    return data


def test_a_stories_file_with_snake_case_fields_is_worked_to_the_end(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    """The seven wild files written with `"stories"` were refused ("userStories: missing") before issue 31."""
    prd = put(project, ralph_env, "Acurioustractor__empathy-ledger-v2")
    assert ralph("validate").out == "ok: .ralph/feat: prd.json valid\n"
    assert "Stories:    0 / 4 pass" in ralph("status").out

    done = run(project, follower(), target="feat", archive=True)

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    archived = next((project / ".ralph" / "archive").iterdir())  # complete: the feature moved to the archive
    stories = stories_in(archived / "prd.json", "stories")
    assert [(story["id"], story["passes"]) for story in stories] == [(f"HERO-00{n}", True) for n in range(1, 5)]
    assert all("acceptance_criteria" in story and "acceptanceCriteria" not in story for story in stories)
    log = git_out(project, "log", "--format=%s", "--reverse").splitlines()
    assert [line for line in log if line.startswith("feat: ")] == [f"feat: HERO-00{n}" for n in range(1, 5)]
    prompt = (archived / "logs" / "iteration-1.prompt.md").read_text()
    assert 'set `"passes": true` for HERO-001 in .ralph/feat/prd.json (its "stories" array).' in prompt
    assert "- [ ] " in prompt  # the acceptance_criteria, shown as the story's criteria
    assert not prd.exists()


@pytest.mark.parametrize(
    ("sample", "key", "first", "before"),
    [
        ("CCExtractor__ccextractor", "", "DVB-004", (3, 8)),  # a top-level array
        ("Diego-redpine__red-pine-beats", "stories", "BUGFIX-003", (27, 28)),  # CRITICAL/HIGH/MEDIUM/LOW, dependencies
        ("77smith-norm__applspeech", "stories", "S01-project-setup", (0, 11)),  # acceptance_criteria, dependencies
        ("7D-codes__lifeos-core", "stories", "LC-005", (4, 12)),  # "status": "completed"/"todo", no passes
    ],
)
def test_one_iteration_on_a_real_file_marks_its_next_story(
    project: Path,
    home: Path,
    ralph_env: dict[str, str],
    sample: str,
    key: str,
    first: str,
    before: tuple[int, int],
) -> None:
    prd = put(project, ralph_env, sample)
    assert f"## Current story: {first} - " in dry_run(project, target="feat")
    status = status_json()
    assert (status["storiesComplete"], status["storiesTotal"]) == before

    done = run(project, follower(), target="feat", n=1, archive=True)

    assert done.outcome.reason.exit_code in (0, 1), done.screen  # complete, or the one iteration spent
    passing = None
    if prd.exists():
        passing = {str(story["id"]) for story in stories_in(prd, key) if story.get("passes") is True}
    assert passing is None or first in passing, done.screen
    if prd.exists():
        assert status_json()["storiesComplete"] == before[0] + 1


def test_a_utf16_prd_is_read_alike_by_validate_run_and_status(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    """A prd.json saved as UTF-16 (Windows' "Unicode"): validate said ok, the run refused it."""
    body = {
        "branchName": "main",
        "userStories": [
            {"id": "US-1", "title": "Café", "priority": 1, "passes": True},
            {"id": "US-2", "title": "Thé", "priority": 2, "passes": False},
        ],
    }
    prd = put(project, ralph_env, json.dumps(body, indent=2, ensure_ascii=False).encode("utf-16"))
    assert ralph("validate").out == "ok: .ralph/feat: prd.json valid\n"
    assert "Stories:    1 / 2 pass" in ralph("status").out
    assert "## Current story: US-2 - Thé" in dry_run(project, target="feat")

    done = run(project, follower(), target="feat", archive=True)

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    assert not prd.exists()  # complete: archived
    archived = next((project / ".ralph" / "archive").iterdir())
    assert [story["passes"] for story in read_json(archived / "prd.json")["userStories"]] == [True, True]
