"""plugins/entry_points.py: the installed distributions' entry points, read with os alone."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralphloop.plugins import entry_points as module
from ralphloop.plugins.entry_points import entry_points


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path, first; the scan's cache emptied before and after."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(folder), *sys.path])
    module._SCANNED.clear()
    yield folder
    module._SCANNED.clear()


def dist(site: Path, name: str, text: str) -> None:
    info = site / f"{name}.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text(text)


def test_a_groups_entry_points_are_read_with_their_distribution(site: Path) -> None:
    dist(
        site,
        "ralph_extra-1.2",
        "[console_scripts]\nx = a:b\n\n[ralphloop.formats]\n# a comment\nlines2 = pkg.mod:FORMAT\n",
    )

    [point] = [point for point in entry_points("ralphloop.formats") if point.name == "lines2"]

    assert (point.value, point.dist) == ("pkg.mod:FORMAT", "ralph-extra 1.2")


def test_the_first_distribution_of_a_name_on_the_path_wins(site: Path, tmp_path: Path) -> None:
    dist(site, "twin-1.0", "[ralphloop.agents]\none = first:SPEC\n")
    later = tmp_path / "later"
    later.mkdir()
    dist(later, "twin-2.0", "[ralphloop.agents]\none = second:SPEC\n")
    sys.path.append(str(later))

    values = [point.value for point in entry_points("ralphloop.agents") if point.name == "one"]

    assert values == ["first:SPEC"]


def test_a_fifo_or_a_folder_in_place_of_the_file_is_passed_over_without_blocking(site: Path) -> None:
    (site / "fifo-1.0.dist-info").mkdir()
    os.mkfifo(site / "fifo-1.0.dist-info" / "entry_points.txt")
    (site / "folder-1.0.dist-info" / "entry_points.txt").mkdir(parents=True)
    dist(site, "fine-1.0", "[ralphloop.formats]\nok = fine:FORMAT\n")

    names = [point.name for point in entry_points("ralphloop.formats")]

    assert "ok" in names


def test_the_working_folder_is_never_a_place_of_plugins(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"  # what `python -m` puts on sys.path, and the agent writes
    project.mkdir()
    dist(project, "evil-1.0", "[ralphloop.formats]\nevil = evilmod:FORMAT\n")
    monkeypatch.chdir(project)
    sys.path.insert(0, "")
    sys.path.insert(0, str(project))

    assert "evil" not in [point.name for point in entry_points("ralphloop.formats")]
