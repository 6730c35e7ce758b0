"""`ralph archive`: a copy under .ralph/archive/<timestamp>-<feature>/, the folder removed, the name free again."""

from __future__ import annotations

import re

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import snapshot

ARCHIVE_NAME = re.compile(r"^\d{8}-\d{6}-feat(-\d+)?$")


def test_archive_moves_the_feature_and_frees_its_name(project, feature, ralph):
    assert ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi")).returncode == 1
    before = snapshot(feature, skip=(".lock",))

    done = ralph("archive", "-f", "feat")

    assert done.returncode == 0, done.stdout + done.stderr
    assert not feature.exists()
    archives = list((project / ".ralph" / "archive").iterdir())
    assert len(archives) == 1
    target = archives[0]
    assert ARCHIVE_NAME.match(target.name), target.name
    assert (target / "prd.json").is_file()
    assert (target / "progress.txt").is_file()
    # A faithful copy of the folder (the lock file means nothing outside a live run).
    assert snapshot(target, skip=(".lock",)) == before
    assert str(target.relative_to(project)) in done.stdout or target.name in done.stdout

    again = ralph("init", "feat")
    assert again.returncode == 0, again.stderr
    assert read_json(feature / "prd.json")["userStories"][0]["passes"] is False
    assert not (feature / "logs").exists()


def test_archive_twice_keeps_both_copies(project, feature, ralph):
    assert ralph("archive", "-f", "feat").returncode == 0
    assert ralph("init", "feat").returncode == 0

    done = ralph("archive")  # the only feature: no -f needed

    assert done.returncode == 0, done.stderr
    assert not feature.exists()
    assert len(list((project / ".ralph" / "archive").iterdir())) == 2


def test_archive_of_a_missing_feature_is_one_line(project, feature, ralph):
    done = ralph("archive", "-f", "nope")

    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1
    assert "nope" in done.stderr
    assert feature.is_dir()
    assert not (project / ".ralph" / "archive").exists()
