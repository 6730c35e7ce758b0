"""`ralph prd` (spec.md → prd.json), `ralph validate`, and what `ralph init` writes for each format."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import assert_one_line_error, snapshot

SPEC = """---
feature: user-auth
branch: feature/user-auth
created: 2026-11-20T10:00:00Z
---

# User authentication

## Problem Statement
Users cannot log in.

## User Stories

### STORY-001: Login form
**As a** visitor
**I want to** log in
**So that** I see my data

**Acceptance Criteria:**
- [ ] The form posts to /login
- [ ] Typecheck passes

**Technical Notes:**
- Use the session module

### STORY-002: Logout
**As a** user
**I want to** log out
**So that** nobody else uses my session

**Acceptance Criteria:**
- [ ] GET /logout clears the session
- [ ] Unit tests pass
"""


def test_prd_from_spec_is_deterministic_and_keeps_progress(project: Path, ralph: RalphRunner) -> None:
    folder = project / ".ralph" / "user-auth"
    folder.mkdir(parents=True)
    (folder / "spec.md").write_text(SPEC)
    first = ralph("prd", "-f", "user-auth")
    assert first.returncode == 0, first.stderr
    prd = json.loads((folder / "prd.json").read_text())
    assert prd["branchName"] == "feature/user-auth" and prd["createdAt"] == "2026-11-20T10:00:00Z"
    assert [(story["id"], story["priority"]) for story in prd["userStories"]] == [("STORY-001", 1), ("STORY-002", 2)]
    assert prd["userStories"][0]["acceptanceCriteria"] == ["The form posts to /login", "Typecheck passes"]
    body = (folder / "prd.json").read_bytes()
    again = ralph("prd", ".ralph/user-auth/spec.md")
    assert again.returncode == 0 and "up to date" in again.stdout
    assert (folder / "prd.json").read_bytes() == body
    # a story marked passing survives a re-plan
    prd["userStories"][0]["passes"] = True
    (folder / "prd.json").write_text(json.dumps(prd, indent=2))
    (folder / "spec.md").write_text(SPEC.replace("Logout", "Sign out"))
    third = ralph("prd", "-f", "user-auth")
    assert third.returncode == 0, third.stderr
    prd = json.loads((folder / "prd.json").read_text())
    assert prd["userStories"][0]["passes"] is True and prd["userStories"][1]["title"] == "Sign out"


def test_prd_refuses_a_bad_spec_and_touches_nothing(project: Path, ralph: RalphRunner) -> None:
    folder = project / ".ralph" / "user-auth"
    folder.mkdir(parents=True)
    (folder / "spec.md").write_text(SPEC.replace("### STORY-002: Logout", "### STORY-001: Logout"))
    (folder / "prd.json").write_text('{"old": true}\n')
    before = snapshot(project)
    done = ralph("prd", "-f", "user-auth")
    assert_one_line_error(done, "spec.md:", "STORY-001")
    assert snapshot(project) == before


def test_validate_lists_every_problem_with_its_place(project: Path, ralph: RalphRunner) -> None:
    folder = project / ".ralph" / "mixed"
    folder.mkdir(parents=True)
    stories = [
        {"id": "A", "title": "a", "priority": "urgent", "passes": False},
        {"id": "A", "title": "b", "priority": 2, "passes": "no"},
    ]
    (folder / "prd.json").write_text(json.dumps({"userStories": stories}))
    (folder / "TODO.md").write_text("# nothing to do\n")
    before = snapshot(project)
    done = ralph("validate", "-f", "mixed")
    assert done.returncode == 1
    out = done.stdout
    assert 'userStories[0].priority: "urgent" is not a whole number, P0..P4, or one of critical' in out
    assert 'userStories[1].passes: expected true or false (found "no")' in out
    assert "userStories[1].id 'A' is used twice" in out
    assert "TODO.md" in out and "no tasks" in out
    assert "4 problems in .ralph/mixed" in out
    assert snapshot(project) == before


def test_validate_ok(project: Path, feature: Path, ralph: RalphRunner) -> None:
    done = ralph("validate")
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("ok: .ralph/feat: prd.json")


def test_init_writes_each_format_and_the_claude_commands(project: Path, ralph: RalphRunner) -> None:
    for kind, task_file in (
        ("todo", "TODO.md"),
        ("fix-plan", "fix_plan.md"),
        ("stories", "specs"),
        ("prd", "prd.json"),
    ):
        name = f"f-{kind}"
        done = ralph("init", name, "--format", kind)
        assert done.returncode == 0, done.stderr
        assert (project / ".ralph" / name / task_file).exists()
        example = ralph("validate", "-f", name)  # the example tasks `ralph init` wrote are not work to run
        assert example.returncode == 1 and "is still the example `ralph init` wrote" in example.stdout, kind
        for path in (project / ".ralph" / name).rglob("*.*"):
            path.write_text(re.sub(r"Replace (this example|this one too|or delete this one)", "Do", path.read_text()))
        checked = ralph("validate", "-f", name)
        assert checked.returncode == 0, (kind, checked.stdout)
    for command in ("ralph-plan.md", "ralph-prd.md"):
        text = (project / ".claude" / "commands" / command).read_text()
        assert "ralph prd" in text
    plan = (project / ".claude" / "commands" / "ralph-plan.md").read_text()
    assert "one context window" in plan.lower() or "one ralph iteration" in plan.lower()


def test_init_keeps_an_edited_claude_command(project: Path, ralph: RalphRunner) -> None:
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "ralph-plan.md").write_text("my own version\n")
    done = ralph("init", "feat")
    assert done.returncode == 0, done.stderr
    assert (commands / "ralph-plan.md").read_text() == "my own version\n"
    assert "Kept your edited .claude/commands/ralph-plan.md" in done.stdout
    assert (commands / "ralph-prd.md").exists()


def test_dry_run_shows_the_branch_and_auto_commit(project: Path, ralph: RalphRunner) -> None:
    plan = project / "plans" / "x"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text("- [ ] one\n")
    done = ralph("run", "plans/x", "--dry-run", "--agent-cmd", agent_cmd("say.py", "hi"))
    assert done.returncode == 0, done.stderr
    assert "# Auto-commit: each iteration's changes are committed" in done.stdout
    assert "## Current task: one" in done.stdout
