"""A bare command finds the task file where a user coming from another Ralph tool keeps it (docs/tasks.md, "Finding
the task file"); a path to the file works like its folder; several are listed with the command for each, which
works when pasted; and after a completed run archives the feature, every reading command shows it, archived."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PYTHON, agent_cmd, write_prd
from tests.integration.helpers import snapshot

READERS = (("validate",), ("run", "--dry-run"), ("status",))


def _stories(folder: Path) -> Path:
    return write_prd(folder, 2, branchName="feature/stories", feature="stories")


def _pasted(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A printed `ralph ...` command run as pasted (this Python's ralph)."""
    assert argv[0] == "ralph", argv
    return subprocess.run(
        [PYTHON, "-m", "ralphloop", *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _commit(project: Path, ralph_env: dict[str, str]) -> None:
    for args in (["add", "-A"], ["commit", "-q", "-m", "files"]):
        subprocess.run(["git", *args], cwd=project, env=ralph_env, check=True)


@pytest.mark.parametrize(
    "folder",
    [".ralph", "scripts/ralph", "ralph", ".", "plans/arena"],
)
def test_a_bare_command_takes_the_one_task_file_at_the_usual_places(project, ralph, ralph_env, folder):
    where = project / folder
    if folder == "plans/arena":
        where.mkdir(parents=True)
        (where / "TODO.md").write_text("# Plan\n\n- [ ] first\n- [ ] second\n")
        shown = "plans/arena/TODO.md"
    else:
        _stories(where)
        shown = str(Path(folder) / "prd.json") if folder != "." else "prd.json"
    _commit(project, ralph_env)
    before = snapshot(project)

    for words in READERS:
        done = ralph(*words)
        assert done.returncode == 0, (words, done.stdout, done.stderr)
    assert ralph("validate").stdout.startswith(f"ok: {Path(shown).parent}: {Path(shown).name} valid")
    assert snapshot(project) == before  # a read changes nothing


def test_a_usual_place_reached_through_a_link_is_not_this_projects(project, ralph, ralph_env, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    _stories(elsewhere / "ralph")
    (project / "scripts").symlink_to(elsewhere)  # scripts/ralph/prd.json is another folder's

    done = ralph("status")

    assert done.returncode == 1 and "no task file where other Ralph tools keep theirs" in done.stderr


def test_a_prd_in_dot_ralph_is_named_after_the_project(project, ralph, ralph_env):
    _stories(project / ".ralph")
    _commit(project, ralph_env)

    status = ralph("status")
    dry = ralph("run", "--dry-run", "--agent-cmd", "true")

    assert status.stdout.splitlines()[0] == f"Feature:    project  ({project / '.ralph'})"
    assert dry.returncode == 0, dry.stderr


def test_the_fix_plan_in_dot_ralph_is_the_roots(project, ralph, ralph_env):
    (project / ".ralph").mkdir()
    (project / ".ralph" / "fix_plan.md").write_text("# Fix plan\n\n- [ ] one\n")
    (project / ".ralph" / "PROMPT.md").write_text("Work the plan.\n")
    _commit(project, ralph_env)

    bare = ralph("status")
    named = ralph("status", "-f", ".ralph/fix_plan.md")  # the file named itself
    for other in (".ralph/PROMPT.md", ".ralph"):  # its prompt beside it, or its folder: the root's plan too
        assert ralph("status", "-f", other).stdout.splitlines()[0] == bare.stdout.splitlines()[0], other

    assert bare.returncode == 0 and named.returncode == 0, bare.stderr + named.stderr
    assert bare.stdout.splitlines()[0] == named.stdout.splitlines()[0]
    assert f"({project})" in bare.stdout.splitlines()[0]


def test_naming_the_task_file_works_like_its_folder(project, ralph, ralph_env):
    _stories(project / "scripts" / "ralph")
    _commit(project, ralph_env)

    by_file = ralph("run", "scripts/ralph/prd.json", "--dry-run")
    by_folder = ralph("run", "scripts/ralph", "--dry-run")
    status = ralph("status", "-f", "scripts/ralph/prd.json")

    assert by_file.returncode == 0, by_file.stderr
    assert by_file.stdout == by_folder.stdout
    assert status.returncode == 0 and "scripts/ralph" in status.stdout
    missing = ralph("run", "scripts/ralph/prd.jsn", "--dry-run")
    assert missing.stderr == "ralph: error: FEATURE scripts/ralph/prd.jsn: no such file\n"
    (project / "notes.txt").write_text("not a task file\n")
    other = ralph("status", "-f", "notes.txt")
    assert other.returncode == 1 and "-f notes.txt: not a task file ralph reads" in other.stderr


def test_several_task_files_are_listed_with_a_command_that_works_pasted(project, ralph, ralph_env):
    _stories(project / "scripts" / "ralph")
    _stories(project)
    _commit(project, ralph_env)

    for words in READERS:
        done = ralph(*words)
        assert done.returncode == 1, (words, done.stdout)
        assert "several task files (scripts/ralph/prd.json, prd.json)" in done.stderr
        assert "Traceback" not in done.stderr
        pasted = [line.strip() for line in done.stderr.splitlines()[1:]]
        assert len(pasted) == 2, done.stderr
        for line in pasted:
            argv = shlex.split(line)
            assert argv[: 1 + len(words[:1])] == ["ralph", *words[:1]], line
            again = _pasted([*argv, *words[1:]], project / "scripts", ralph_env)  # anywhere in the project
            assert again.returncode == 0, (line, again.stderr)


def test_a_root_todo_is_worked_only_when_named_and_the_error_says_how(project, ralph, ralph_env):
    (project / "TODO.md").write_text("# Somebody's list\n\n- [ ] buy milk\n")
    _commit(project, ralph_env)

    done = ralph("run", "--dry-run")

    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert "no task file where other Ralph tools keep theirs (.ralph/, scripts/ralph/" in line
    command = line.rsplit(": ", 1)[1]
    assert command.startswith("ralph run -f ")
    pasted = _pasted([*shlex.split(command), "--dry-run"], project, ralph_env)
    assert pasted.returncode == 0, pasted.stderr
    status = ralph("status", "-f", ".")
    for suggested in re.findall(r"ralph \w[\w-]*(?: [^\s,;)]+)*", status.stdout):
        assert " -f " in suggested or suggested.split()[1] in ("init",), suggested


def _complete(project: Path, ralph) -> Path:
    """A feature `auth` whose one story a command agent passes: the run completes and archives it."""
    assert ralph("init", "auth").returncode == 0
    prd = project / ".ralph" / "auth" / "prd.json"
    data = json.loads(prd.read_text())
    data["userStories"][0]["title"] = "Make a file"
    prd.write_text(json.dumps(data, indent=2))
    done = ralph("run", "--agent-cmd", agent_cmd("story_agent.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    (archive,) = (project / ".ralph" / "archive").iterdir()
    return archive


def test_after_the_end_every_reading_command_shows_the_archived_feature(project, ralph, tmp_path):
    archive = _complete(project, ralph)
    shown = str(archive.relative_to(project))

    status = ralph("status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines()[0] == f"Feature:    auth  (archived in {shown})"
    as_json = json.loads(ralph("status", "--json").stdout)
    assert as_json["feature"] == "auth" and as_json["archived"] is True
    assert ralph("status", "-f", "auth").stdout.splitlines()[:3] == status.stdout.splitlines()[:3]  # by its name
    report = ralph("report")
    assert report.returncode == 0 and f"auth is archived: {shown}" in report.stdout, report.stderr
    page = tmp_path / "report.html"
    html = ralph("report", "--html", str(page))
    assert html.returncode == 0, html.stderr
    assert "<title>ralph report: auth</title>" in page.read_text()
    for words in (("logs", "1"), ("analyze", "1"), ("logs", "1", "-f", "auth")):
        done = ralph(*words)
        assert done.returncode == 0 and shown in done.stdout, (words, done.stdout, done.stderr)
    run = ralph("run", "--dry-run")
    assert run.returncode == 1 and f"the last one, auth, is archived in {shown}" in run.stderr
    named = ralph("validate", "-f", "auth")  # a command for an active feature: where it went, and the way back
    assert named.stderr == (
        f"ralph: error: -f auth: archived in {shown} (ralph status -f auth reads it there; ralph init auth starts "
        "it afresh)\n"
    )
