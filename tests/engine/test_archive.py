"""Archiving at a run's end (seed 003 F9), in-process: a run built as `ralph run` builds it that completes moves the
feature folder to .ralph/archive/<timestamp>-<feature>/, after its end hooks; its agent played back (harness.py),
real git, real hooks and files. `ralph archive` itself (a taken destination, another filesystem, a kill mid-copy, a
running feature, its one-line errors) is tests/integration/test_archive.py's.
"""

from __future__ import annotations

from pathlib import Path

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import STORY, Turns, entries, ralph, run
from tests.integration.test_archive import only_archive


def test_a_completed_run_moves_the_feature_into_the_archive(project: Path, feature: Path) -> None:
    prompt_inode = (feature / "prompt.md").stat().st_ino

    done = run(project, Turns(then=STORY), archive=True)

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    assert not feature.exists()  # seed 003: archive_and_exit moves the folder
    target = only_archive(project)
    assert f"Archived: the feature folder moved to {target.relative_to(project)}" in done.screen
    assert all(story["passes"] for story in read_json(target / "prd.json")["userStories"])
    assert len(entries(target)) == 3
    assert read_json(target / "status.json")["exitReason"] == "complete"
    assert (target / "prompt.md").stat().st_ino == prompt_inode
    assert ralph("init", "feat").code == 0  # the name starts afresh


def test_the_end_hooks_run_before_the_feature_moves(project: Path, feature: Path, tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    hook = f"ls $RALPH_FEATURE_DIR > {seen}"
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + f"hooks:\n  on_complete: {hook!r}\n")

    done = run(project, Turns(then=STORY), archive=True)

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    assert "prd.json" in seen.read_text().split()  # the hook found the feature where it was
    assert not feature.exists()
    assert (only_archive(project) / "logs" / "hooks").is_dir()  # its log went with the feature
