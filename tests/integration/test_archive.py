"""Archiving (seed 003 F9) moves the feature folder to .ralph/archive/<timestamp>-<feature>/: `ralph archive`, and a
run that completes. The folder is gone afterwards and its name free again; a rename keeps every file as it was
(the same inodes: nothing was copied); a taken destination is never written over; a running feature is refused.
A completed run's archive (after its end hooks) is tests/engine/test_archive.py's, in-process."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import assert_one_line_error, read_pid, snapshot, wait_until

ARCHIVE_NAME = re.compile(r"^\d{8}-\d{6}-feat(-\d+)?$")


def _inodes(folder: Path) -> dict[str, int]:
    """Each file's inode, by its path in `folder`: a rename keeps them, a copy would not."""
    return {str(path.relative_to(folder)): path.stat().st_ino for path in folder.rglob("*") if path.is_file()}


def only_archive(project: Path) -> Path:
    archives = list((project / ".ralph" / "archive").iterdir())
    assert len(archives) == 1, archives
    assert ARCHIVE_NAME.match(archives[0].name), archives[0].name
    return archives[0]


def test_archive_moves_the_feature_and_frees_its_name(project, feature, ralph):
    assert ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi")).returncode == 1
    before, inodes = snapshot(feature), _inodes(feature)

    done = ralph("archive", "-f", "feat")

    assert done.returncode == 0, done.stdout + done.stderr
    assert not feature.exists()
    target = only_archive(project)
    assert snapshot(target) == before  # every file, the run's lock included, as it was
    assert _inodes(target) == inodes  # moved, not copied
    assert done.stdout.strip() == f"Archived .ralph/feat to {target.relative_to(project)}"

    again = ralph("init", "feat")
    assert again.returncode == 0, again.stderr
    assert read_json(feature / "prd.json")["userStories"][0]["passes"] is False
    assert not (feature / "logs").exists()


def test_archive_twice_keeps_both(project, feature, ralph):
    assert ralph("archive", "-f", "feat").returncode == 0
    assert ralph("init", "feat").returncode == 0

    done = ralph("archive")  # the only feature: no -f needed

    assert done.returncode == 0, done.stderr
    assert not feature.exists()
    assert len(list((project / ".ralph" / "archive").iterdir())) == 2


def _stamps(around: datetime, seconds: int) -> Iterator[str]:
    """Every archive stamp from a second before `around` to `seconds` after it."""
    for offset in range(-1, seconds + 1):
        yield (around + timedelta(seconds=offset)).strftime("%Y%m%d-%H%M%S")


def test_a_destination_that_exists_is_never_written_over(project, feature, ralph):
    # Every name the archive could take in the next two minutes is taken: an empty folder (which a rename would
    # replace without a word), a folder with a file, or a file.
    archive = project / ".ralph" / "archive"
    archive.mkdir()
    for n, stamp in enumerate(_stamps(datetime.now(UTC), 120)):
        taken = archive / f"{stamp}-feat"
        if n % 3 == 0:
            taken.mkdir()
        elif n % 3 == 1:
            taken.mkdir()
            (taken / "keep.txt").write_text(stamp)
        else:
            taken.write_text(stamp)
    before = snapshot(archive)

    done = ralph("archive", "-f", "feat")

    assert done.returncode == 0, done.stdout + done.stderr
    assert not feature.exists()
    after = snapshot(archive)
    new = sorted({path.split("/")[0] for path in after} - {path.split("/")[0] for path in before})
    assert len(new) == 1 and new[0].endswith("-feat-2"), new
    assert {path: data for path, data in after.items() if not path.startswith(new[0])} == before


def _other_filesystem(project: Path) -> Path:
    """A new folder on another filesystem than the project's: /dev/shm (a tmpfs) when the project is on a disk,
    /var/tmp or /tmp when the tests run on a tmpfs (scripts/test.sh puts them there); else the test is skipped."""
    device = project.stat().st_dev
    for where in ("/dev/shm", "/var/tmp", "/tmp"):
        if os.path.isdir(where) and os.access(where, os.W_OK) and os.stat(where).st_dev != device:
            return Path(tempfile.mkdtemp(dir=where))
    pytest.skip("no second filesystem (/dev/shm, /var/tmp or /tmp) to archive to")


def test_archive_across_filesystems_copies_checks_then_removes(project, feature, ralph):
    elsewhere = _other_filesystem(project)
    try:
        (project / ".ralph" / "archive").symlink_to(elsewhere, target_is_directory=True)
        assert ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi")).returncode == 1
        (feature / "link").symlink_to("prd.json")
        before = snapshot(feature, skip=(".lock",))

        done = ralph("archive", "-f", "feat")

        assert done.returncode == 0, done.stdout + done.stderr
        assert not feature.exists()
        (target,) = list(elsewhere.iterdir())  # no half copy left beside it
        assert ARCHIVE_NAME.match(target.name), target.name
        assert snapshot(target) == before  # every file but the archiving command's lock
        assert os.readlink(target / "link") == "prd.json"
        assert sorted(os.listdir(project / ".ralph")) == [".gitignore", "archive", "config.yaml"]
    finally:
        shutil.rmtree(elsewhere)


def test_archive_killed_while_it_copies_loses_nothing(project, feature, ralph, background):
    elsewhere = _other_filesystem(project)
    try:
        (project / ".ralph" / "archive").symlink_to(elsewhere, target_is_directory=True)
        (feature / "big.bin").write_bytes(os.urandom(1024) * 32 * 1024)  # 32 MB: the copy takes a while
        before = snapshot(feature, skip=(".lock",))  # a killed archiver leaves its PID there, as any lock holder

        archiving = background.ralph("archive", "-f", "feat")
        assert wait_until(lambda: any(elsewhere.iterdir()) or archiving.poll() is not None)
        archiving.kill()  # SIGKILL, at the first sign of the copy
        archiving.communicate(timeout=30)

        # Whatever the instant: the folder whole where it was, or whole in the archive.
        if feature.exists():
            assert snapshot(feature, skip=(".lock",)) == before
            done = ralph("archive", "-f", "feat")  # a half copy left behind stops nothing
            assert done.returncode == 0, done.stdout + done.stderr
        assert not feature.exists()
        (finished,) = list(elsewhere.iterdir())  # a half copy a killed archiver left is swept by the next one
        assert ARCHIVE_NAME.match(finished.name), finished.name
        assert snapshot(finished, skip=(".lock",)) == before
    finally:
        shutil.rmtree(elsewhere)


def test_a_feature_with_a_run_going_on_is_refused(project, feature, ralph, background, tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    first = background.ralph("run", "-n", "1", "--agent-cmd", agent_cmd("hang_with_grandchild.py", str(pidfile)))
    assert wait_until(lambda: read_pid(pidfile) is not None or first.poll() is not None)
    assert first.poll() is None, first.communicate(timeout=30)
    background.adopt_tree(first.pid)
    before = snapshot(project)

    done = ralph("archive", "-f", "feat", timeout=60)

    assert_one_line_error(done, "already running", f"PID {first.pid}")
    assert snapshot(project) == before


def test_archive_of_a_missing_feature_is_one_line(project, feature, ralph):
    done = ralph("archive", "-f", "nope")

    assert_one_line_error(done, "nope")
    assert feature.is_dir()
    assert not (project / ".ralph" / "archive").exists()


def test_an_archive_that_is_a_file_is_one_line_and_moves_nothing(project, feature, ralph):
    (project / ".ralph" / "archive").write_text("not a folder")
    before = snapshot(project)

    done = ralph("archive", "-f", "feat")

    assert_one_line_error(done, ".ralph/archive: not a folder", "could not archive feat")
    assert snapshot(project) == before
