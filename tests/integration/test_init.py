"""`ralph init NAME`: a new feature folder in the seed layout; runtime files stay out of git."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import agent_cmd, write_prd
from tests.integration.helpers import assert_one_line_error, git, snapshot

SEED_PRD_KEYS = {"feature", "branchName", "description", "createdAt", "userStories"}
RUNTIME = ("logs/", "status.json", "state.json", ".lock")


def test_init_creates_the_feature_layout(project, ralph):
    done = ralph("init", "my-feature")

    assert done.returncode == 0, done.stderr
    folder = project / ".ralph" / "my-feature"
    prd = json.loads((folder / "prd.json").read_text())
    assert prd.keys() >= SEED_PRD_KEYS
    assert prd["feature"] == "my-feature"
    assert len(prd["userStories"]) == 1
    story = prd["userStories"][0]
    assert story["passes"] is False
    assert {"id", "title", "priority", "passes", "acceptanceCriteria"} <= story.keys()
    assert (folder / "progress.txt").read_text().startswith("# Progress Log: my-feature")
    assert (folder / "prompt.md").read_text().strip()
    assert (folder / "specs").is_dir()
    config = yaml.safe_load((project / ".ralph" / "config.yaml").read_text())
    assert isinstance(config, dict)
    ignore = (project / ".ralph" / ".gitignore").read_text().splitlines()
    for name in RUNTIME:
        assert name in ignore or name.rstrip("/") in ignore, name


def test_the_new_feature_is_runnable_once_its_example_story_is_replaced(project, ralph):
    assert ralph("init", "fresh").returncode == 0
    prd = project / ".ralph" / "fresh" / "prd.json"
    story = json.loads(prd.read_text())["userStories"][0]

    dry = ralph("run", "--dry-run", "--agent-cmd", agent_cmd("say.py"))  # starts nothing: shows the prompt
    checked = ralph("validate")
    before = snapshot(project)
    refused = ralph("run", "--agent-cmd", agent_cmd("say.py"))

    assert dry.returncode == 0, dry.stderr
    assert story["id"] in dry.stdout
    assert "STORY-001 is still the example `ralph init` wrote" in dry.stderr  # as a warning
    assert checked.returncode == 1
    assert "prd.json: STORY-001 is still the example `ralph init` wrote" in checked.stdout + checked.stderr
    assert_one_line_error(refused, "STORY-001 is still the example")
    assert snapshot(project) == before

    prd.write_text(prd.read_text().replace("Replace this example story with the first real one", "Add a CSV export"))
    assert ralph("validate").returncode == 0


def test_runtime_files_stay_out_of_git(project, feature, ralph, ralph_env):
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hi"))
    assert done.returncode == 1, done.stderr
    for name in ("logs", "status.json", "state.json", ".lock"):
        assert (feature / name).exists(), name

    porcelain = git(project, ralph_env, "status", "--porcelain", "--untracked-files=all")

    for line in porcelain.splitlines():
        path = line[3:]
        assert "/logs/" not in path, line
        assert not path.endswith(("status.json", "state.json", ".lock")), line
    assert ".ralph/feat/prd.json" in porcelain  # the feature's own files are not hidden


def test_agent_commits_do_not_pick_up_runtime_files(project, feature, ralph, ralph_env):
    done = ralph("run", "--agent-cmd", agent_cmd("story_agent.py"))  # `git add -A` in every iteration
    assert done.returncode == 0, done.stderr

    tracked = git(project, ralph_env, "ls-files").splitlines()

    assert ".ralph/feat/prd.json" in tracked
    for path in tracked:
        assert "/logs/" not in path, path
        assert not path.endswith(("status.json", "state.json", ".lock")), path


def test_second_init_of_the_same_name_changes_nothing(project, feature, ralph):
    write_prd(feature, 2)
    before = snapshot(project)

    done = ralph("init", "feat")

    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "feat" in done.stderr
    assert snapshot(project) == before


@pytest.mark.parametrize("name", ["../escape", "a/b", "archive", ".hidden", "_under", "has space", "x" * 101, ""])
def test_invalid_names_are_refused(project, ralph, name):
    before = snapshot(project)

    done = ralph("init", name)

    assert done.returncode == 1, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(project) == before
    assert not (project.parent / "escape").exists()


def test_init_of_a_second_feature_keeps_the_project_config(project, feature, ralph):
    config = project / ".ralph" / "config.yaml"
    config.write_text("defaults:\n  max_iterations: 7\n")

    done = ralph("init", "second")

    assert done.returncode == 0, done.stderr
    assert config.read_text() == "defaults:\n  max_iterations: 7\n"
    assert (project / ".ralph" / "second" / "prd.json").is_file()
    assert (feature / "prd.json").is_file()
