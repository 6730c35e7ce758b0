"""`ralph status`: where a feature stands, from its files alone."""

from __future__ import annotations

import json
import re

from tests.conftest import agent_cmd
from tests.integration.helpers import snapshot


def _status(ralph, *args):
    done = ralph("status", *args)
    assert done.returncode == 0, done.stderr
    return done


def test_status_before_any_run(project, feature, ralph):
    before = snapshot(project)

    report = json.loads(_status(ralph, "--json").stdout)

    assert report["status"] == "not started"
    assert report["storiesTotal"] == 3
    assert report["storiesComplete"] == 0
    assert report["alive"] is False
    assert report["feature"] == "feat"
    text = _status(ralph).stdout
    assert re.search(r"^Stories:.*\b0 / 3\b", text, re.MULTILINE), text
    assert snapshot(project) == before  # status only reads


def test_status_after_a_complete_run(project, feature, ralph):
    assert ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py")).returncode == 0

    report = json.loads(_status(ralph, "--json", "-f", "feat").stdout)

    assert report["status"] == "complete"
    assert report["exitReason"] == "complete"
    assert report["storiesComplete"] == 3
    assert report["storiesTotal"] == 3
    assert report["iteration"] == 3
    assert report["totalIterations"] == 3
    assert report["alive"] is False
    assert report["lastOutcome"]["status"] == "complete"
    text = _status(ralph).stdout
    assert re.search(r"^Stories:.*\b3 / 3\b", text, re.MULTILINE), text
    assert re.search(r"^Status:.*complete", text, re.MULTILINE), text


def test_status_after_hitting_the_limit(project, feature, ralph):
    assert ralph("run", "-n", "2", "--agent-cmd", agent_cmd("story_agent.py")).returncode == 1

    report = json.loads(_status(ralph, "--json").stdout)

    assert report["exitReason"] == "max_iterations"
    assert report["storiesComplete"] == 2
    assert report["storiesTotal"] == 3
    assert report["iteration"] == 2
    assert report["maxIterations"] == 2
    text = _status(ralph).stdout
    assert re.search(r"^Stories:.*\b2 / 3\b", text, re.MULTILINE), text


def test_status_follows_hand_edits_of_prd(project, feature, ralph):
    prd = json.loads((feature / "prd.json").read_text())
    prd["userStories"][0]["passes"] = True
    (feature / "prd.json").write_text(json.dumps(prd))

    report = json.loads(_status(ralph, "--json").stdout)

    assert report["storiesComplete"] == 1
