"""Where the phone finds `ralph serve`'s page (project/page.py): the address a live server published, for the project
and for a loop of a parallel run working in a linked worktree of it; nothing once that server is gone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ralphloop.project.page import page_file, page_url, publish, withdraw


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RALPH_HOME", str(tmp_path / "ralph-home"))
    return tmp_path / "ralph-home"


def test_a_live_server_s_address_is_found_from_the_project_and_from_a_linked_worktree(
    home: Path, tmp_path: Path
) -> None:
    main = tmp_path / "repo"
    main.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "i"],
    ):
        subprocess.run(["git", *args], cwd=main, check=True)
    (main / "app").mkdir()
    subprocess.run(["git", "worktree", "add", "-q", str(tmp_path / "loop"), "-b", "loop"], cwd=main, check=True)
    (tmp_path / "loop" / "app").mkdir()

    publish(str(main / "app"), "https://phone.example/?token=t")  # this process is the server: it lives
    assert oct(Path(page_file(str(main / "app"))).stat().st_mode & 0o777) == "0o600"
    assert page_url(str(main / "app")) == "https://phone.example/?token=t"
    assert page_url(str(tmp_path / "loop" / "app")) == "https://phone.example/?token=t"  # a loop's worktree
    assert page_url(str(tmp_path / "loop")) is None  # another project: the repository's top

    withdraw(str(main / "app"))
    assert page_url(str(main / "app")) is None


def test_the_address_of_a_server_that_is_gone_is_not_given(home: Path, tmp_path: Path) -> None:
    publish(str(tmp_path), "https://phone.example/?token=t")
    path = Path(page_file(str(tmp_path)))
    body = json.loads(path.read_text())
    path.write_text(json.dumps({**body, "pid": 2**22 + 1}))  # past any pid_max: no such process
    assert page_url(str(tmp_path)) is None
