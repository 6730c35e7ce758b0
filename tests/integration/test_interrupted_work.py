"""An agent call cut short by Ctrl+C, SIGTERM or a hang-up is saved and undone, its task marks with it: the next
run starts where that call started, so nothing it half did is done twice or left uncommitted for ever beside the
retry's work (found by the chaos suite: a half-written file the retry left as it was was never committed, and
the run said ALL COMPLETE over it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import entry_fields, git, progress_entries


@pytest.mark.parametrize("signame", ["INT", "TERM", "HUP"])
def test_an_interrupted_call_is_saved_and_undone_and_the_next_run_does_it_once(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, signame: str
) -> None:
    (project / ".ralph" / "config.yaml").write_text("git:\n  auto_commit: true\n")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-qm", "feature")
    cmd = agent_cmd("half_then_interrupt.py", str(tmp_path / "interrupted-once"), signame)

    first = ralph("run", "--no-archive", "--agent-cmd", cmd)

    assert first.returncode == 130, first.stdout + first.stderr
    assert not (project / "work-S-1.txt").exists() and not (project / "ledger.txt").exists()
    saved = "refs/ralph/attempts/feat/iteration-1"
    assert git(project, ralph_env, "show", f"{saved}:work-S-1.txt") == "half\n"
    (entry,) = [entry_fields(text) for text in progress_entries((feature / "progress.txt").read_text())]
    assert entry["Status"] == "interrupted"
    assert f"interrupted attempt saved as {saved}" in entry["Note"], entry
    assert read_json(feature / "status.json")["exitReason"] == "interrupted"

    second = ralph("run", "--no-archive", "--agent-cmd", cmd)

    assert second.returncode == 0, second.stdout + second.stderr
    stories = read_json(feature / "prd.json")["userStories"]
    assert all(story["passes"] for story in stories)
    # each story's work once, all of it committed
    ledger = git(project, ralph_env, "show", "HEAD:ledger.txt").split()
    assert sorted(ledger) == sorted(story["id"] for story in stories), ledger
    for story in stories:
        assert git(project, ralph_env, "show", f"HEAD:work-{story['id']}.txt") == f"done {story['id']}\n"
    left = git(project, ralph_env, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert [line for line in left if not line.endswith("progress.txt")] == []


def test_a_ctrl_c_during_the_gates_of_a_finished_feature_is_an_interruption_not_a_failing_gate(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """Found by the chaos suite: every story passed, the gates ran, a Ctrl+C stopped one, and the run ended
    "every task is done, but quality gates fail" (exit 1) — no gate had failed."""
    prd = read_json(feature / "prd.json")
    for story in prd["userStories"]:
        story["passes"] = True
    (feature / "prd.json").write_text(json.dumps(prd, indent=2))
    gate = 'kill -INT "$PPID"; sleep 30'  # the gate's parent is ralph: the user's Ctrl+C, while it runs
    (project / ".ralph" / "config.yaml").write_text(f"quality_checks:\n  slow: {json.dumps(gate)}\n")

    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("say.py", "never"))

    assert done.returncode == 130, done.stdout + done.stderr
    assert "quality gates fail" not in done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "interrupted"
