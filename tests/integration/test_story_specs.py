"""Seed 002's story specs, end to end in a real git repo: specs/epic-N/story-N.M-slug.md at the project
root, worked in natural order with depends_on respected, marked done by ralph on a matching DONE tag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import assert_one_line_error, git, snapshot


def spec(story: str, *, status: str = "pending", depends: str = "[]", body: str = "") -> str:
    return (
        f"---\nstatus: {status}\npriority: high\nestimation: 3\ndepends_on: {depends}\nfrs: [FR-1]\n---\n\n"
        f"# Story {story} title\n\nMARKER-{story}\n\n## Acceptance Criteria\n\n- it works\n{body}"
    )


def write_specs(project: Path, specs: dict[str, str]) -> None:
    for story, text in specs.items():
        epic = story.split(".")[0]
        folder = project / "specs" / f"epic-{epic}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"story-{story}-slug-{story.replace('.', '-')}.md").write_text(text)


def commit_all(project: Path, env: dict[str, str]) -> None:
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "specs")


def seen(project: Path) -> list[dict[str, object]]:
    """What spec_agent.py recorded, iteration by iteration (the file is beside the project)."""
    return [json.loads(line) for line in (project.parent / "seen.jsonl").read_text().splitlines()]


@pytest.fixture
def ralph_env(ralph_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**ralph_env, "SEEN_FILE": str(tmp_path / "seen.jsonl")}


def plan_file(tmp_path: Path, plan: dict[str, str]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return str(path)


def test_natural_order_dependencies_and_marking_done(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    write_specs(
        project,
        {
            "1.2": spec("1.2"),
            "1.10": spec("1.10"),
            "1.3": spec("1.3", depends='["1.10"]'),
            "2.1": spec("2.1"),
        },
    )
    commit_all(project, ralph_env)
    done = ralph("run", "--agent-cmd", agent_cmd("spec_agent.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ALL COMPLETE!" in done.stdout
    # 1.2 < 1.3 < 1.10 naturally, but 1.3 waits for 1.10
    order = [item["task"] for item in seen(project)]
    assert order == ["1.2", "1.10", "1.3", "2.1"]
    # the whole spec is in each prompt (its marker line), and RALPH_TASK_ID is the id as written
    assert all(item["has_spec"] for item in seen(project))
    # the spec's frontmatter says done now; nothing else in it changed
    path = project / "specs" / "epic-1" / "story-1.10-slug-1-10.md"
    assert path.read_text() == spec("1.10").replace("status: pending", "status: done")
    # state.json in .ralph/ holds seed 002's fields
    state = json.loads((project / ".ralph" / "state.json").read_text())
    assert state["completed_stories"] == ["1.10", "1.2", "1.3", "2.1"]
    assert state["retry_count"] == 0
    progress = (project / "progress.txt").read_text()
    for story in ("1.2", "1.10", "1.3", "2.1"):
        assert f"[DONE] Story {story} - title - " in progress  # the heading's "Story N.M" is not repeated
        assert f"[LEARN] story {story} needed care" in progress
    # ralph's runtime files went to .ralph/, not the project root
    assert not (project / "status.json").exists() and (project / ".ralph" / "status.json").exists()
    # ralph status finds the root workspace on its own
    status = ralph("status", "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert (report["format"], report["storiesComplete"], report["storiesTotal"]) == ("stories", 4, 4)
    assert "Stories:    4 / 4 done" in ralph("status").stdout


def test_missing_signal_and_mismatched_done_are_failures_retried(
    project: Path, tmp_path: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    write_specs(project, {"1.1": spec("1.1"), "1.2": spec("1.2")})
    commit_all(project, ralph_env)
    plan = plan_file(tmp_path, {"1": "silent", "2": "other:1.2", "3": "done", "*": "done"})
    done = ralph("run", "--agent-cmd", agent_cmd("spec_agent.py", plan))
    assert done.returncode == 0, done.stdout + done.stderr
    progress = (project / "progress.txt").read_text()
    assert "[FAIL] Story 1.1 - no completion signal in output - " in progress
    assert "(attempt 1/3)" in progress
    assert "[FAIL] Story 1.1 - mismatched: the agent signalled DONE 1.2, not 1.1 - " in progress
    assert "(attempt 2/3)" in progress
    # the failed attempts were undone: work-1.1.txt only holds the third attempt's line
    assert (project / "work-1.1.txt").read_text() == "attempt in iteration 3\n"
    assert [item["task"] for item in seen(project)] == ["1.1", "1.1", "1.1", "1.2"]


def test_retries_exhausted_stops_for_a_human(
    project: Path, tmp_path: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    write_specs(project, {"3.1": spec("3.1")})
    commit_all(project, ralph_env)
    done = ralph("run", "--agent-cmd", agent_cmd("spec_agent.py", plan_file(tmp_path, {"*": "fail:tests red"})))
    assert done.returncode == 1
    assert "retries_exhausted" in done.stdout
    assert "ralph run -s 3.1" in done.stdout
    progress = (project / "progress.txt").read_text()
    assert "[FAIL] Story 3.1 - the agent signalled FAIL: tests red - " in progress and "(attempt 3/3)" in progress
    state = json.loads((project / ".ralph" / "state.json").read_text())
    assert state["current_story"] == "3.1" and state["retry_count"] == 3


def test_state_is_rebuilt_from_progress_when_missing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    write_specs(project, {"1.1": spec("1.1"), "1.2": spec("1.2"), "1.3": spec("1.3")})
    (project / "progress.txt").write_text("[DONE] Story 1.1 - earlier - 2026-01-30T10:00:00Z\n")
    commit_all(project, ralph_env)
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("spec_agent.py"))
    assert done.returncode == 1, done.stdout + done.stderr  # one iteration allowed, one story left
    assert [item["task"] for item in seen(project)] == ["1.2"]
    state = json.loads((project / ".ralph" / "state.json").read_text())
    assert state["completed_stories"] == ["1.1", "1.2"]


def test_story_and_resume_from(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    write_specs(project, {"1.1": spec("1.1"), "1.2": spec("1.2"), "2.1": spec("2.1")})
    commit_all(project, ralph_env)
    one = ralph("run", "-s", "2.1", "--agent-cmd", agent_cmd("spec_agent.py"))
    assert one.returncode == 0, one.stdout + one.stderr
    assert [item["task"] for item in seen(project)] == ["2.1"]
    rest = ralph("run", "--resume-from", "1.2", "--agent-cmd", agent_cmd("spec_agent.py"))
    assert rest.returncode == 0, rest.stdout + rest.stderr
    assert [item["task"] for item in seen(project)] == ["2.1", "1.2"]
    state = json.loads((project / ".ralph" / "state.json").read_text())
    assert state["completed_stories"] == ["1.2", "2.1"]  # -s and --resume-from never drop earlier ones


def test_log_file_gets_timestamped_lines(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    write_specs(project, {"1.1": spec("1.1")})
    commit_all(project, ralph_env)
    done = ralph("run", "--log-file", "ralph.log", "--agent-cmd", agent_cmd("spec_agent.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (project / "ralph.log").read_text().splitlines()
    assert any("Iteration 1" in line for line in lines)
    assert any("ALL COMPLETE!" in line for line in lines)
    assert all(line.startswith("[20") and line[20:22] == "] " for line in lines if line)


def test_bad_specs_stop_before_anything_is_touched(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    cases = {
        "cycle": ({"1.1": spec("1.1", depends='["1.2"]'), "1.2": spec("1.2", depends='["1.1"]')}, "cycle"),
        "unknown dependency": ({"1.1": spec("1.1", depends='["9.9"]')}, "9.9"),
        "bad frontmatter": ({"1.1": "---\nstatus: [unclosed\n---\n# x\n"}, "story-1.1"),
        "bad status": ({"1.1": spec("1.1", status="finished")}, "finished"),
    }
    for name, (specs, needle) in cases.items():
        for old in (project / "specs").glob("*/*.md") if (project / "specs").exists() else []:
            old.unlink()
        write_specs(project, specs)
        before = snapshot(project)
        done = ralph("run", "--agent-cmd", agent_cmd("spec_agent.py"))
        line = assert_one_line_error(done, needle)
        assert "specs/epic-" in line, (name, line)
        assert snapshot(project) == before, name


def test_story_order_naming_a_missing_spec_is_an_error(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    write_specs(project, {"1.1": spec("1.1")})
    (project / ".ralph").mkdir()
    (project / ".ralph" / "config.yaml").write_text('story_order: ["1.1", "4.2"]\n')
    before = snapshot(project)
    done = ralph("run", "--agent-cmd", agent_cmd("spec_agent.py"))
    assert_one_line_error(done, "4.2")
    assert snapshot(project) == before
