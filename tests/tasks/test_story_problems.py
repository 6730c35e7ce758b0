"""StorySource.problems: what load refuses, each at its place; among them each story of the run waiting on one
outside it that is not done (the run would stop there), at its depends_on line. Done by the records counts."""

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
    return [str(problem) for problem in src.problems()]


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


def test_the_specs_problems_and_an_unknown_resume_from_as_load_says_them(tmp_path: Path) -> None:
    spec(tmp_path, "1.1", "'9.9'")
    assert found(source(tmp_path)) == [
        "ws/specs/epic-1/story-1.1-x.md:4: depends_on names 9.9, but there is no specs/epic-9/story-9.9-*.md"
    ]
    spec(tmp_path, "1.1")
    assert found(source(tmp_path, resume_from="7.7")) == ["--resume-from 7.7: no such story in ws/specs (stories: 1.1)"]
