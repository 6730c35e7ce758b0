"""StorySource.unreachable: each story of the run waiting on one outside it that is not done (the run would stop
there), at its depends_on line; what the records say is done counts as done."""

from __future__ import annotations

from pathlib import Path

from ralphloop.tasks.stories.source import StorySource


def spec(root: Path, sid: str, depends: str = "", status: str = "pending") -> None:
    """A spec whose depends_on id (when given) is on line 4."""
    path = root / "specs" / f"epic-{sid.split('.', maxsplit=1)[0]}" / f"story-{sid}-x.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    depends_on = f"depends_on:\n  - {depends}\n" if depends else ""
    path.write_text(f"---\nstatus: {status}\n{depends_on}---\n# S\n")


def source(root: Path, story_order: list[str] | None = None, resume_from: str | None = None) -> StorySource:
    state, progress = str(root / "state.json"), str(root / "progress.txt")
    return StorySource(str(root), "ws", state, progress, story_order=story_order, resume_from=resume_from)


def found(src: StorySource) -> list[str]:
    return [str(problem) for problem in src.unreachable()]


def test_a_dependency_left_out_by_story_order_is_named_at_its_line(tmp_path: Path) -> None:
    spec(tmp_path, "1.1")
    spec(tmp_path, "1.2")
    spec(tmp_path, "1.3", "'1.2'")
    assert found(source(tmp_path, ["1.1", "1.3"])) == [
        "ws/specs/epic-1/story-1.3-x.md:4: story 1.3 depends on 1.2, which story_order leaves out and is not done"
    ]
    assert found(source(tmp_path)) == []  # without story_order 1.2 is in the run


def test_a_dependency_skipped_by_resume_from(tmp_path: Path) -> None:
    spec(tmp_path, "1.1")
    spec(tmp_path, "1.2")
    spec(tmp_path, "1.3", "'1.1'")
    assert found(source(tmp_path, resume_from="1.2")) == [
        "ws/specs/epic-1/story-1.3-x.md:4: story 1.3 depends on 1.1, which --resume-from 1.2 skips and is not done"
    ]
    assert found(source(tmp_path, resume_from="1.1")) == []


def test_done_by_the_records_or_the_spec_is_no_problem(tmp_path: Path) -> None:
    spec(tmp_path, "1.1")
    spec(tmp_path, "1.2")
    spec(tmp_path, "1.3", "'1.2'")
    (tmp_path / "progress.txt").write_text("[DONE] Story 1.2 - x - 2026-01-01T00:00:00Z\n")
    assert found(source(tmp_path, ["1.1", "1.3"])) == []
    spec(tmp_path, "1.3", "'1.2'", status="done")  # a finished story waits for nothing
    (tmp_path / "progress.txt").unlink()
    assert found(source(tmp_path, ["1.1", "1.3"])) == []


def test_what_load_reports_itself_is_left_to_load(tmp_path: Path) -> None:
    spec(tmp_path, "1.1", "'9.9'")  # an unknown id: a scan problem
    assert found(source(tmp_path, ["1.1"])) == []
    spec(tmp_path, "1.1")
    assert found(source(tmp_path, resume_from="7.7")) == []  # no such story: load's error
