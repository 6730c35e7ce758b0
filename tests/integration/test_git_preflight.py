"""Git before the first iteration (seeds 003, 004) at the CLI's edge: real `ralph run`, real git. Each refusal is
one error line with every file left as it was; the warnings and the branch the run prints. A run outside git when
git is not required and the branch branch.auto_create names are tests/engine/test_git_preflight.py's, in-process."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import assert_one_line_error, git, snapshot

FINISH = agent_cmd("story_agent.py")


def test_not_a_repository_is_an_error(tmp_path: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    plain = tmp_path / "plain"
    (plain / "plans" / "x").mkdir(parents=True)
    (plain / "plans" / "x" / "TODO.md").write_text("- [ ] one\n")
    before = snapshot(plain)
    done = ralph("run", "plans/x", "--agent-cmd", FINISH, cwd=plain)
    assert_one_line_error(done, "not a git repository", "git init")
    assert snapshot(plain) == before


def test_detached_head_is_an_error(project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "feature")
    git(project, ralph_env, "checkout", "-q", "--detach")
    before = snapshot(project)
    done = ralph("run", "--agent-cmd", FINISH)
    assert_one_line_error(done, "detached HEAD", "git switch")
    assert snapshot(project) == before


def test_missing_identity_names_the_fix(project: Path, feature: Path, ralph: RalphRunner) -> None:
    no_identity = {
        "GIT_AUTHOR_NAME": "",
        "GIT_AUTHOR_EMAIL": "",
        "GIT_COMMITTER_NAME": "",
        "GIT_COMMITTER_EMAIL": "",
    }
    before = snapshot(project)
    done = ralph("run", "--agent-cmd", FINISH, env=no_identity)
    line = assert_one_line_error(done, "user.name", "git config --global user.name")
    assert "is not configured" in line
    assert snapshot(project) == before


def test_identity_from_git_config_is_read_key_by_key(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """user.name set in the repository's config but no user.email: the error names the one missing."""
    no_identity = {"GIT_AUTHOR_NAME": "", "GIT_AUTHOR_EMAIL": "", "GIT_COMMITTER_NAME": "", "GIT_COMMITTER_EMAIL": ""}
    git(project, ralph_env, "config", "user.name", "Configured Name")
    done = ralph("run", "--agent-cmd", FINISH, env=no_identity)
    assert_one_line_error(done, "user.email", "git config --global user.email")
    git(project, ralph_env, "config", "user.email", "configured@example.invalid")
    done = ralph("run", "--agent-cmd", FINISH, env=no_identity)
    assert "is not configured" not in done.stderr + done.stdout


def test_uncommitted_and_untracked_files_are_a_warning(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    (project / "tracked.txt").write_text("one\n")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "base")
    (project / "tracked.txt").write_text("two\n")
    (project / "loose.txt").write_text("new\n")
    done = ralph("run", "-n", "1", "--agent-cmd", FINISH)
    assert done.returncode in (0, 1), done.stderr
    assert "⚠ 1 uncommitted change in the working tree: tracked.txt" in done.stdout
    assert "⚠ 1 untracked file: loose.txt" in done.stdout
    # the user's work is untouched
    assert (project / "tracked.txt").read_text() == "two\n"
    assert (project / "loose.txt").read_text() == "new\n"


def current_branch(project: Path, env: dict[str, str]) -> str:
    return git(project, env, "branch", "--show-current").strip()


def test_prd_branch_name_is_created_then_reused(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "feature")
    done = ralph("run", "-n", "1", "--agent-cmd", FINISH)
    assert "created branch feature/feat" in done.stdout, done.stdout + done.stderr
    assert current_branch(project, ralph_env) == "feature/feat"
    git(project, ralph_env, "switch", "-q", "main")
    again = ralph("run", "-n", "1", "--agent-cmd", FINISH)
    assert "switched to branch feature/feat" in again.stdout, again.stdout + again.stderr
    assert current_branch(project, ralph_env) == "feature/feat"


def test_switch_that_would_overwrite_user_work_is_refused(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    (project / "shared.txt").write_text("main version\n")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "base")
    git(project, ralph_env, "switch", "-q", "-c", "feature/feat")
    (project / "shared.txt").write_text("branch version\n")
    git(project, ralph_env, "commit", "-q", "-am", "on the branch")
    git(project, ralph_env, "switch", "-q", "main")
    (project / "shared.txt").write_text("uncommitted user work\n")
    before = snapshot(project)
    done = ralph("run", "-n", "1", "--agent-cmd", FINISH)
    assert_one_line_error(done, "cannot switch to branch feature/feat", "commit or stash")
    after = snapshot(project)
    after.pop(".ralph/feat/.lock")  # the run lock, taken before the switch so that no other run is disturbed
    after.pop(".ralph/feat/events.jsonl")  # the monitor's event log (a runtime file): the dirty-tree warning
    assert after == before
    assert current_branch(project, ralph_env) == "main"
