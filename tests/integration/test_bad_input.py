"""Bad input stops `ralph run` with one line on stderr, exit 1, and no file touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import agent_cmd, write_prd
from tests.integration.helpers import assert_one_line_error, snapshot

SAY = agent_cmd("say.py", "should never run")


def _schema_invalid(feature):
    prd = json.loads((feature / "prd.json").read_text())
    prd["userStories"][1]["passes"] = "no"
    return json.dumps(prd, indent=2) + "\n"


MALFORMED = {
    "bad-json": (lambda feature: '{"feature": "feat", "userStories": [\n', "JSON"),
    "passes-not-bool": (_schema_invalid, "passes"),
    "no-stories": (
        lambda feature: json.dumps({"feature": "feat", "branchName": "b", "userStories": []}) + "\n",
        "userStories",
    ),
    "not-an-object": (lambda feature: "[1, 2, 3]\n", "prd.json"),
    "story-without-id": (
        lambda feature: json.dumps({"userStories": [{"title": "t", "priority": 1, "passes": False}]}) + "\n",
        "id",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_prd_is_one_line_and_touches_nothing(project, feature, ralph, tmp_path, case):
    make, problem = MALFORMED[case]
    (feature / "prd.json").write_text(make(feature))
    before = snapshot(project)
    marker = tmp_path / "ran.jsonl"

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("story_agent.py", "--record", str(marker)))

    assert_one_line_error(done, "prd.json", problem)
    assert snapshot(project) == before
    assert not marker.exists()


def test_malformed_prd_is_refused_by_dry_run_and_status_too(project, feature, ralph):
    (feature / "prd.json").write_text("{oops\n")
    before = snapshot(project)

    assert_one_line_error(ralph("run", "--dry-run", "--agent-cmd", SAY), "prd.json")
    assert_one_line_error(ralph("status"), "prd.json")
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--agent", "nope"), ("nope",)),
        (("-t", "15x", "--agent-cmd", SAY), ("-t", "15x")),
        (("--timeout", "-5", "--agent-cmd", SAY), ("-t",)),
        (("-n", "many", "--agent-cmd", SAY), ("-n", "many")),
        (("-p", "missing-template.md", "--agent-cmd", SAY), ("missing-template.md",)),
        (("--bogus-flag", "--agent-cmd", SAY), ("--bogus-flag",)),
        (("-f", "nope", "--agent-cmd", SAY), ("nope",)),
        (("nope", "--agent-cmd", SAY), ("nope",)),
        (("--agent-cmd", "definitely-not-a-command-xyz"), ("definitely-not-a-command-xyz",)),
        (("--agent-cmd", "'unbalanced"), ("--agent-cmd",)),
        (("--agent", "claude", "--agent-cmd", SAY), ("--agent",)),
    ],
    ids=[
        "unknown-agent",
        "bad-timeout",
        "negative-timeout",
        "bad-iterations",
        "missing-prompt-file",
        "unknown-flag",
        "missing-feature-flag",
        "missing-feature-positional",
        "agent-not-on-path",
        "agent-cmd-unsplittable",
        "agent-and-agent-cmd",
    ],
)
def test_bad_run_arguments_are_one_line_and_touch_nothing(project, feature, ralph, args, needles):
    before = snapshot(project)

    done = ralph("run", *args)

    assert_one_line_error(done, *needles)
    assert snapshot(project) == before
    assert not (feature / "logs").exists()


def test_several_features_without_f_asks_for_f(project, feature, ralph):
    assert ralph("init", "other").returncode == 0
    write_prd(project / ".ralph" / "other", 1)
    before = snapshot(project)

    done = ralph("run", "--agent-cmd", SAY)

    # one line of error, then the command for each feature on a line of its own
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "ralph: error: several features in .ralph/ (feat, other): choose one:",
        "  ralph run -f feat",
        "  ralph run -f other",
    ]
    assert snapshot(project) == before


def test_no_feature_at_all(project, ralph):
    done = ralph("run", "--agent-cmd", SAY)

    assert_one_line_error(done, "ralph init")
    assert not (project / ".ralph").exists()


def test_malformed_config_names_the_file(project, feature, ralph):
    (project / ".ralph" / "config.yaml").write_text("defaults: [max_iterations: 3\n  oops: {\n")
    before = snapshot(project)

    done = ralph("run", "--agent-cmd", SAY)

    assert_one_line_error(done, ".ralph/config.yaml")
    assert snapshot(project) == before


def test_bad_value_in_config_names_the_file_and_key(project, feature, ralph):
    (project / ".ralph" / "config.yaml").write_text("defaults:\n  timeout_minutes: soon\n")
    before = snapshot(project)

    done = ralph("run", "--agent-cmd", SAY)

    assert_one_line_error(done, ".ralph/config.yaml", "timeout_minutes")
    assert snapshot(project) == before


def test_malformed_user_config_names_the_file(project, feature, ralph, ralph_env):
    home = Path(ralph_env["RALPH_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("agent: [unclosed\n")
    before = snapshot(project)

    done = ralph("run", "--agent-cmd", SAY)

    assert_one_line_error(done, "config.yaml")
    assert str(home) in done.stderr or "ralph-home" in done.stderr
    assert snapshot(project) == before
